import type { Settings } from "@agentnet/contracts";
import { type FormEvent, useEffect, useState } from "react";
import { useFieldErrors } from "../../components/field-errors";
import { Badge, Check, Field, FormError, LoadState, Progress, SaveStatus } from "../../components/ui";
import { formatDateTime } from "../../domain/format";
import { useLoad, useSubmit } from "../../hooks";
import { useSession } from "../../session";

type Mutable = Pick<
  Settings,
  "enable_log_collection" | "enable_prompt_collection" | "redact_pii" | "access_log_retention_days"
>;

function MutableFields(props: {
  value: Mutable;
  onChange: (v: Mutable) => void;
  disabled: boolean;
  error: (p: string) => string | undefined;
}) {
  const v = props.value;
  return (
    <>
      <Check
        label="Collect access logs"
        name="enable_log_collection"
        hint="one row per request"
        checked={v.enable_log_collection}
        disabled={props.disabled}
        onChange={(on) => props.onChange({ ...v, enable_log_collection: on })}
      />
      <Check
        label="Collect prompts and completions"
        name="enable_prompt_collection"
        checked={v.enable_prompt_collection}
        disabled={props.disabled}
        onChange={(on) => props.onChange({ ...v, enable_prompt_collection: on })}
      />
      <Check
        label="Redact PII in captured prompts"
        name="redact_pii"
        checked={v.redact_pii}
        disabled={props.disabled}
        onChange={(on) => props.onChange({ ...v, redact_pii: on })}
      />
      <Field
        label="Access-log retention (days)"
        hint="0 or less keeps rows indefinitely"
        name="access_log_retention_days"
        error={props.error("access_log_retention_days")}
      >
        {(c) => (
          <input
            {...c}
            type="number"
            step={1}
            disabled={props.disabled}
            value={v.access_log_retention_days}
            onChange={(e) =>
              props.onChange({ ...v, access_log_retention_days: Math.trunc(Number(e.target.value)) })
            }
          />
        )}
      </Field>
    </>
  );
}

/** The settings lifecycle: create (proxy address or dedicated endpoint), edit, delete (412 shown). */
export function SettingsPage() {
  const { api, canWrite } = useSession();
  const loaded = useLoad(() => api.settings(), []);
  const settings = loaded.data;
  const configured = settings !== undefined && (settings.endpoint !== "" || settings.proxy_address !== "");
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Gateway settings</h1>
      <LoadState loading={loaded.loading && !settings} error={loaded.error} what="settings" />
      {settings && !configured ? (
        <CreateSettings defaults={settings} canWrite={canWrite} onDone={loaded.reload} />
      ) : null}
      {settings && configured ? (
        <EditSettings settings={settings} canWrite={canWrite} onDone={loaded.reload} />
      ) : null}
    </section>
  );
}

function CreateSettings(props: { defaults: Settings; canWrite: boolean; onDone: () => void }) {
  const { api } = useSession();
  const [mode, setMode] = useState<"proxy" | "dedicated">("proxy");
  const [host, setHost] = useState("");
  const [mutable, setMutable] = useState<Mutable>(props.defaults);
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const key = mode === "proxy" ? "proxy_address" : "endpoint";
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    errors.submitted();
    void submit.run(async () => {
      await api.createSettings({ ...mutable, [key]: host.trim() });
      props.onDone();
    });
  };
  return (
    <form
      className="card form"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label="Create gateway settings"
    >
      <h2>Set up the gateway</h2>
      <p>No settings yet. Creating them allocates the gateway endpoint your members point their SDKs at.</p>
      <FormError error={errors.apiError} />
      <fieldset>
        <legend>Endpoint</legend>
        <div className="check">
          <input
            id="mode-proxy"
            type="radio"
            name="mode"
            checked={mode === "proxy"}
            onChange={() => setMode("proxy")}
          />
          <label htmlFor="mode-proxy">Allocate an endpoint under a proxy (cluster) address</label>
        </div>
        <div className="check">
          <input
            id="mode-dedicated"
            type="radio"
            name="mode"
            checked={mode === "dedicated"}
            onChange={() => setMode("dedicated")}
          />
          <label htmlFor="mode-dedicated">Claim a dedicated endpoint hostname</label>
        </div>
      </fieldset>
      <Field
        label={mode === "proxy" ? "Proxy address" : "Dedicated endpoint"}
        hint="A DNS hostname, e.g. proxy.example.com"
        {...errors.field(key)}
      >
        {(c) => (
          <input
            {...c}
            value={host}
            onChange={(e) => setHost(e.target.value)}
            required
            disabled={!props.canWrite}
          />
        )}
      </Field>
      <MutableFields value={mutable} onChange={setMutable} disabled={!props.canWrite} error={errors.error} />
      {submit.busy ? <Progress label="Allocating the endpoint…" /> : null}
      {props.canWrite ? (
        <button type="submit" disabled={submit.busy}>
          Create settings
        </button>
      ) : (
        <p className="hint">Only owners and admins can change settings.</p>
      )}
    </form>
  );
}

function EditSettings(props: { settings: Settings; canWrite: boolean; onDone: () => void }) {
  const { api } = useSession();
  const s = props.settings;
  const [mutable, setMutable] = useState<Mutable>(s);
  const [saved, setSaved] = useState(false);
  const [confirming, setConfirming] = useState(false);
  useEffect(() => setMutable(props.settings), [props.settings]);
  const save = useSubmit();
  const errors = useFieldErrors(save.error);
  const remove = useSubmit();
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    errors.submitted();
    void save.run(async () => {
      await api.updateSettings({ ...mutable, endpoint: s.endpoint, proxy_address: s.proxy_address });
      setSaved(true);
      props.onDone();
    });
  };
  const onDelete = () =>
    void remove.run(async () => {
      await api.deleteSettings();
      setConfirming(false);
      props.onDone();
    });
  return (
    <>
      <dl className="fields card">
        <div>
          <dt>Endpoint</dt>
          <dd>
            <code data-testid="endpoint">{s.endpoint}</code>{" "}
            {s.dedicated ? <Badge tone="info">dedicated</Badge> : null}
          </dd>
        </div>
        <div>
          <dt>Proxy address</dt>
          <dd>{s.proxy_address || "—"}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{s.created_at ? formatDateTime(s.created_at) : "—"}</dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>{s.updated_at ? formatDateTime(s.updated_at) : "—"}</dd>
        </div>
      </dl>
      <form
        className="card form"
        onSubmit={onSubmit}
        onChange={errors.onChange}
        aria-label="Edit gateway settings"
      >
        <h2>Collection</h2>
        <FormError error={errors.apiError} />
        <MutableFields
          value={mutable}
          onChange={setMutable}
          disabled={!props.canWrite}
          error={errors.error}
        />
        <SaveStatus busy={save.busy} saved={saved} />
        {props.canWrite ? (
          <button type="submit" disabled={save.busy}>
            Save settings
          </button>
        ) : null}
      </form>
      {props.canWrite ? (
        <div className="card danger">
          <h2>Delete settings</h2>
          <p>Releases the endpoint. Refused while a provider exists or a proxy serves the endpoint.</p>
          <FormError error={remove.error} />
          {confirming ? (
            <>
              <button type="button" className="danger" onClick={onDelete} disabled={remove.busy}>
                Yes, delete the settings
              </button>{" "}
              <button type="button" className="ghost" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </>
          ) : (
            <button type="button" className="danger" onClick={() => setConfirming(true)}>
              Delete settings…
            </button>
          )}
        </div>
      ) : null}
    </>
  );
}
