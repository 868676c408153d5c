import type { BudgetRule, NotificationEventType, NotificationSettings, Policy } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import type { NotificationBody } from "../../api/endpoints";
import { ConfirmDelete } from "../../components/confirm";
import { useFieldErrors } from "../../components/field-errors";
import { ShownOncePanel } from "../../components/shown-once-panel";
import {
  Badge,
  Check,
  EmptyState,
  Field,
  FormError,
  LoadState,
  MultiCheck,
  SaveStatus,
  ScrollableTable,
} from "../../components/ui";
import { DELIVERY_TONE, describeEvent, parseThresholds } from "../../domain/alerts";
import { formatDateTime } from "../../domain/format";
import { useLoad, useSubmit } from "../../hooks";
import { userLabel, useSession } from "../../session";

const EVENT_TYPES: { type: NotificationEventType; label: string; hint: string }[] = [
  {
    type: "budget.threshold_crossed",
    label: "A cap reaches a threshold",
    hint: "once per threshold, cap and window",
  },
  {
    type: "provider.credential_failed",
    label: "A vendor refuses a provider's key",
    hint: "at most once an hour per provider",
  },
];

/**
 * Alerts by signed webhook: where they go, what they watch, the signing secret (shown once), and
 * the log of recent deliveries.
 */
export function AlertsPage() {
  const { api, canWrite } = useSession();
  const settings = useLoad(() => api.notifications(), []);
  const rules = useLoad(() => api.budgetRules.list(), []);
  const policies = useLoad(() => api.policies.list(), []);
  const [secret, setSecret] = useState<string | undefined>();
  const [deleting, setDeleting] = useState(false);
  const rotation = useSubmit();
  const removal = useSubmit();
  const loaded = !settings.loading || settings.data !== undefined;
  const rotate = () =>
    void rotation.run(async () => {
      setSecret((await api.rotateSigningSecret()).signing_secret);
    });
  return (
    <section aria-labelledby="alerts-title">
      <h1 id="alerts-title">Alerts</h1>
      <p className="lede">
        A signed JSON POST to your URL when a cap reaches a threshold of its limit in a window, or when a
        vendor refuses a provider's key, so nobody finds out from refused requests.
      </p>
      <LoadState loading={settings.loading && !settings.data} error={settings.error} what="alerts" />
      {secret ? (
        <ShownOncePanel
          title="Signing secret"
          note="Copy it into your receiver now: it will not be shown again. Whoever holds it can sign alerts as agentnet."
          label="Secret"
          noun="secret"
          value={secret}
          onClose={() => setSecret(undefined)}
        />
      ) : null}
      {loaded && !settings.error ? (
        <WebhookForm
          key={settings.data?.updated_at ?? "new"}
          existing={settings.data}
          rules={rules.data ?? []}
          policies={policies.data ?? []}
          onSaved={(made) => {
            if (made) setSecret(made);
            settings.reload();
          }}
        />
      ) : null}
      {settings.data && canWrite ? (
        <div className="card">
          <h2>Signing secret</h2>
          <p>
            Every delivery carries <code>X-Agentnet-Signature: t=&lt;unix seconds&gt;,v1=&lt;hex&gt;</code>:
            HMAC-SHA256 of <code>&lt;t&gt;.&lt;raw body&gt;</code> keyed with the secret. Check it, and refuse
            a <code>t</code> more than 5 minutes old. A new secret takes effect at once.
          </p>
          <FormError error={rotation.error} />
          <button type="button" onClick={rotate} disabled={rotation.busy}>
            Replace the signing secret
          </button>{" "}
          <button type="button" className="danger" onClick={() => setDeleting(true)}>
            Remove the webhook…
          </button>
          <FormError error={removal.error} />
        </div>
      ) : null}
      <DeliveryLog />
      {deleting ? (
        <ConfirmDelete
          noun="webhook"
          name={settings.data?.url ?? ""}
          usedBy={[]}
          busy={removal.busy}
          onCancel={() => setDeleting(false)}
          onConfirm={() =>
            void removal
              .run(async () => {
                await api.deleteNotifications();
                settings.reload();
              })
              .finally(() => setDeleting(false))
          }
        />
      ) : null}
    </section>
  );
}

function WebhookForm(props: {
  existing: NotificationSettings | undefined;
  rules: BudgetRule[];
  policies: Policy[];
  onSaved: (signingSecret: string | undefined) => void;
}) {
  const { api, canWrite } = useSession();
  const e = props.existing;
  const [url, setUrl] = useState(e?.url ?? "");
  const [enabled, setEnabled] = useState(e?.enabled ?? true);
  const [events, setEvents] = useState<NotificationEventType[]>(
    e?.events ?? EVENT_TYPES.map((option) => option.type),
  );
  const [thresholds, setThresholds] = useState((e?.thresholds ?? [50, 80, 100]).join(", "));
  const [ruleIds, setRuleIds] = useState(e?.budget_rule_ids ?? []);
  const [policyIds, setPolicyIds] = useState(e?.policy_ids ?? []);
  const [saved, setSaved] = useState(false);
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const parsed = parseThresholds(thresholds);
    const found: Record<string, string> = {};
    if ("error" in parsed) found.thresholds = parsed.error;
    if (events.length === 0) found.events = "Pick at least one kind of alert.";
    if (!errors.submitted(found) || "error" in parsed) return;
    const body: NotificationBody = {
      url: url.trim(),
      enabled,
      events,
      thresholds: parsed.thresholds,
      budget_rule_ids: ruleIds,
      policy_ids: policyIds,
    };
    void submit.run(async () => {
      if (e) {
        await api.updateNotifications(body);
        setSaved(true);
        props.onSaved(undefined);
      } else {
        props.onSaved((await api.createNotifications(body)).signing_secret);
      }
    });
  };
  const toggleEvent = (type: NotificationEventType, on: boolean) =>
    setEvents(on ? [...events, type] : events.filter((each) => each !== type));
  return (
    <form
      className="card form"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label="Webhook for alerts"
    >
      <h2>{e ? "Webhook" : "Send alerts to a webhook"}</h2>
      {e ? null : <p>No webhook yet: nobody is told when a cap fills up.</p>}
      <FormError error={errors.apiError} invalid={errors.invalid} />
      <Field
        label="URL"
        hint="http:// or https://; private addresses only where the operator allows them"
        {...errors.field("url")}
      >
        {(c) => (
          <input
            {...c}
            type="url"
            value={url}
            required
            disabled={!canWrite}
            onChange={(event) => setUrl(event.target.value)}
          />
        )}
      </Field>
      <Check
        label="Send alerts"
        {...errors.field("enabled")}
        checked={enabled}
        disabled={!canWrite}
        onChange={setEnabled}
      />
      <fieldset className={`multi${errors.error("events") ? " field-invalid" : ""}`}>
        <legend>Alert when</legend>
        {EVENT_TYPES.map((option) => (
          <Check
            key={option.type}
            label={option.label}
            name="events"
            hint={option.hint}
            checked={events.includes(option.type)}
            disabled={!canWrite}
            onChange={(on) => toggleEvent(option.type, on)}
          />
        ))}
        {errors.error("events") ? <p className="field-error">{errors.error("events")}</p> : null}
      </fieldset>
      <Field
        label="Thresholds (% of a cap)"
        hint="e.g. 50, 80, 100; a cap refuses a request that would pass it, so 100 % may never be reached"
        {...errors.field("thresholds")}
      >
        {(c) => (
          <input
            {...c}
            value={thresholds}
            disabled={!canWrite}
            onChange={(event) => setThresholds(event.target.value)}
          />
        )}
      </Field>
      <MultiCheck
        legend="Caps of these budget rules"
        {...errors.field("budget_rule_ids")}
        options={props.rules.map((rule) => ({ id: rule.id, label: rule.name }))}
        selected={ruleIds}
        onChange={setRuleIds}
        empty="No budget rules yet."
        disabled={!canWrite}
      />
      <MultiCheck
        legend="Caps of these policies"
        {...errors.field("policy_ids")}
        options={props.policies.map((policy) => ({ id: policy.id, label: policy.name }))}
        selected={policyIds}
        onChange={setPolicyIds}
        empty="No policies yet."
        disabled={!canWrite}
      />
      <p className="hint">With no rule and no policy ticked, every cap is watched.</p>
      <SaveStatus busy={submit.busy} saved={saved} />
      {canWrite ? (
        <button type="submit" disabled={submit.busy}>
          {e ? "Save webhook" : "Create webhook"}
        </button>
      ) : (
        <p className="hint">Only owners and admins change alerts.</p>
      )}
    </form>
  );
}

/** The latest deliveries, newest first: what was sent, how it went, and why not when it did not. */
function DeliveryLog() {
  const { api, users } = useSession();
  const log = useLoad(() => api.notificationDeliveries(), []);
  const groups = useLoad(() => api.groups(), []);
  const nameOf = (id: string) => groups.data?.find((group) => group.id === id)?.name ?? userLabel(users, id);
  const rows = log.data;
  return (
    <div className="card">
      <h2>Deliveries</h2>
      <button type="button" className="ghost" onClick={log.reload} disabled={log.loading}>
        Refresh
      </button>
      <LoadState loading={log.loading && !rows} error={log.error} what="deliveries" />
      {rows && rows.length === 0 ? (
        <EmptyState title="Nothing sent yet">
          Alerts appear here as they are sent, with every attempt.
        </EmptyState>
      ) : null}
      {rows && rows.length > 0 ? (
        <ScrollableTable
          label="Deliveries"
          columns={["Time", "Alert", "Status", { label: "Attempts", numeric: true }, "Answer", "Last error"]}
        >
          {rows.map((row) => (
            <tr key={row.id}>
              <td>{formatDateTime(row.created_at)}</td>
              <td>{describeEvent(row.event, nameOf)}</td>
              <td>
                <Badge tone={DELIVERY_TONE[row.status]}>{row.status}</Badge>
                {row.next_attempt_at ? <> next {formatDateTime(row.next_attempt_at)}</> : null}
              </td>
              <td className="num">{row.attempts}</td>
              <td>{row.response_status ?? "—"}</td>
              <td>{row.last_error || "—"}</td>
            </tr>
          ))}
        </ScrollableTable>
      ) : null}
    </div>
  );
}
