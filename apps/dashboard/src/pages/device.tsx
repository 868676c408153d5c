import type { AgentCredential, DeviceApproval, DevicePreview } from "@agentnet/contracts";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { ApiError } from "../api/client";
import {
  Badge,
  EmptyState,
  Field,
  FormError,
  LoadState,
  RowActions,
  ScrollableTable,
} from "../components/ui";
import { formatDateTime } from "../domain/format";
import { useLoad, useSubmit } from "../hooks";
import { type Location, navigate } from "../router";
import { useSession } from "../session";

/**
 * Where a member confirms the code `agentnet login` printed (its URL opens this page with
 * `?user_code=`), and the agent sign-ins they hold, each revocable. A whole code shows who asked
 * for it (client, address, agent, when) before it is confirmed: a code someone else sent shows a
 * stranger's.
 */
export function DevicePage(props: { location: Location }) {
  const { api } = useSession();
  const fromUrl = props.location.params.get("user_code") ?? "";
  const [typed, setTyped] = useState(fromUrl);
  const [answer, setAnswer] = useState<{ code: string; approval: DeviceApproval } | undefined>();
  const credentials = useLoad(() => api.agentCredentials(), []);
  const [awaiting, setAwaiting] = useState<number | undefined>();
  const stopAwaiting = useCallback(() => setAwaiting(undefined), []);
  useAwaitNewCredential(awaiting, credentials.data?.length, credentials.reload, stopAwaiting);
  const submit = useSubmit();
  const code = typed.trim();
  const whole = code.replace(/[^A-Za-z]/g, "").length === 8;
  const preview = useLoad(
    () => (whole && !answer ? api.devicePreview(code) : Promise.resolve(undefined)),
    [whole ? code.toUpperCase() : "", answer === undefined],
  );

  const decide = (approve: boolean) =>
    void submit.run(async () => {
      setAnswer(undefined);
      const approval = await api.approveDevice(code, approve).catch((error: unknown) => {
        throw error instanceof ApiError && error.status === 404
          ? new Error(
              `No agent is waiting for the code ${code}: it was used, refused or expired (10 minutes).`,
            )
          : error;
      });
      setAnswer({ code, approval });
      // The code is spent either way: keep it out of the URL so a reload does not offer it again.
      if (fromUrl) navigate("/device", undefined, true);
      if (approval.approved) setAwaiting(credentials.data?.length ?? 0);
    });
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    decide(true);
  };
  const client = answer?.approval.client_name;
  return (
    <section aria-labelledby="device-title">
      <h1 id="device-title">Confirm an agent sign-in</h1>
      <p className="lede">
        <code>agentnet login</code> printed a code and a link here. Confirm it only if you started that
        sign-in just now: the agent then gets short-lived tokens that act as you.
      </p>
      <form className="card form" onSubmit={onSubmit} aria-label="Device code">
        <FormError error={submit.error} />
        <Field label="Code" hint="8 letters as XXXX-XXXX, as the CLI printed it">
          {(control) => (
            <input
              {...control}
              className="device-code"
              autoComplete="off"
              spellCheck={false}
              placeholder="XXXX-XXXX"
              value={typed}
              onChange={(event) => {
                setTyped(event.target.value);
                // Another code: what was answered for the last one no longer stands for it.
                setAnswer(undefined);
              }}
              required
            />
          )}
        </Field>
        {/* While a decision is under way the preview may already find the code spent: wait for the answer. */}
        {whole && !answer && !submit.busy && !preview.loading ? (
          preview.error ? (
            <FormError error={preview.error} />
          ) : (
            <Asker preview={preview.data} />
          )
        ) : null}
        <div className="actions">
          <button type="submit" disabled={submit.busy || code === "" || (whole && preview.loading)}>
            Confirm
          </button>
          <button
            type="button"
            className="secondary"
            disabled={submit.busy || code === ""}
            onClick={() => decide(false)}
          >
            Refuse
          </button>
        </div>
        {answer ? (
          <p role="status" className="device-result">
            <Badge tone={answer.approval.approved ? "ok" : "muted"}>
              {answer.approval.approved ? "Confirmed" : "Refused"}
            </Badge>{" "}
            {answer.approval.approved
              ? `${client ? `“${client}”` : "The agent"} (code ${answer.code}) is signed in as you: it collects its tokens within a few seconds.`
              : `${client ? `“${client}”` : "The agent"} (code ${answer.code}) was refused and gets no token.`}
          </p>
        ) : null}
      </form>
      <h2>Your agent sign-ins</h2>
      <LoadState
        loading={credentials.loading && !credentials.data}
        error={credentials.error}
        what="your agent sign-ins"
      />
      {credentials.data && credentials.data.length === 0 ? (
        <EmptyState title="No agent is signed in as you">
          Run <code>agentnet login</code> on the machine where your agent runs.
        </EmptyState>
      ) : null}
      {credentials.data && credentials.data.length > 0 ? (
        <CredentialTable credentials={credentials.data} onRevoked={credentials.reload} />
      ) : null}
    </section>
  );
}

/**
 * The credential of a confirmed code exists only once the agent collects its tokens (it polls every
 * few seconds): the list is re-read until one more is there, for as long as the agent may take.
 */
function useAwaitNewCredential(
  countBefore: number | undefined,
  count: number | undefined,
  reload: () => void,
  done: () => void,
) {
  const arrived = countBefore !== undefined && count !== undefined && count > countBefore;
  useEffect(() => {
    if (countBefore === undefined) return;
    if (arrived) {
      done();
      return;
    }
    const timer = setInterval(reload, AWAIT_POLL_MS);
    const stop = setTimeout(done, AWAIT_FOR_MS);
    return () => {
      clearInterval(timer);
      clearTimeout(stop);
    };
  }, [countBefore, arrived, reload, done]);
}

/** Who asked for the code being confirmed, or that nobody is waiting for it. */
function Asker(props: { preview: DevicePreview | undefined }) {
  const asked = props.preview;
  if (!asked) {
    return (
      <p role="status">No agent is waiting for this code: it was used, refused or expired (10 minutes).</p>
    );
  }
  return (
    <dl className="fields" aria-label="Who asked for this code">
      <dt>Client</dt>
      <dd>{asked.client_name ?? <span className="hint">unnamed</span>}</dd>
      <dt>Asked at</dt>
      <dd>{formatDateTime(asked.requested_at)}</dd>
      <dt>From</dt>
      <dd>{asked.address ?? <span className="hint">unknown address</span>}</dd>
      {asked.user_agent ? (
        <>
          <dt>Agent</dt>
          <dd>
            <code>{asked.user_agent}</code>
          </dd>
        </>
      ) : null}
      <dt>Expires</dt>
      <dd>{formatDateTime(asked.expires_at)}</dd>
    </dl>
  );
}

const AWAIT_POLL_MS = 2_000;
/** Past the CLI's poll interval (5 s) with room for a slow network or a `slow_down`. */
const AWAIT_FOR_MS = 60_000;

function CredentialTable(props: { credentials: AgentCredential[]; onRevoked: () => void }) {
  const { api } = useSession();
  const revoke = useSubmit();
  const name = (c: AgentCredential) => c.client_name ?? `sign-in of ${formatDateTime(c.created_at)}`;
  return (
    <>
      <FormError error={revoke.error} />
      <ScrollableTable
        label="Your agent sign-ins"
        columns={["Client", "Created", "Last used", "Expires"]}
        actions
      >
        {props.credentials.map((c) => (
          <tr key={c.id}>
            <td>{c.client_name ?? <span className="hint">unnamed</span>}</td>
            <td>{formatDateTime(c.created_at)}</td>
            <td>{c.last_used ? formatDateTime(c.last_used) : "never"}</td>
            <td>{formatDateTime(c.expires_at)}</td>
            <RowActions
              name={name(c)}
              deleteVerb="Revoke"
              deleteDisabled={revoke.busy}
              onDelete={() =>
                void revoke.run(async () => {
                  await api.revokeAgentCredential(c.id);
                  props.onRevoked();
                })
              }
            />
          </tr>
        ))}
      </ScrollableTable>
    </>
  );
}
