import type { AccessLogEntryView, McpToolCall, RequestAttempt } from "@agentnet/contracts";
import type { ReactNode } from "react";
import { Conversation } from "../components/conversation";
import { Drawer } from "../components/drawer";
import { type LogLookups, useLogLookups } from "../components/log-filters";
import { Badge, CopyButton, FormError, Progress } from "../components/ui";
import { attemptOutcome, attemptsSummary } from "../domain/attempts";
import { decisionText } from "../domain/deny-reasons";
import { DEFAULT_FILTERS, filtersToParams, logEntryHash } from "../domain/filters";
import { formatDateTime, formatDuration, formatTokens, formatUsd } from "../domain/format";
import { useLoad } from "../hooks";
import { hrefOf } from "../router";
import { useSession } from "../session";

/** Long session ids (Claude Code's are UUIDs) show their start; the title holds all of it. */
const shortId = (id: string) => (id.length > 14 ? `${id.slice(0, 8)}…` : id);

/** A session id linking to that session's page. */
export function SessionLink(props: { id: string }) {
  if (props.id === "") return <>—</>;
  return (
    <a href={hrefOf(`/sessions/${encodeURIComponent(props.id)}`)} title={props.id}>
      {shortId(props.id)}
    </a>
  );
}

/** What an id of a log row stands for: its name and page when known to the caller. */
interface Named {
  id: string;
  name: string | undefined;
  href: string | undefined;
}

/**
 * Names for a log row's ids: users from the session, the rest from `lookups`. A user links to their
 * requests for callers who see everyone's; configuration links only where the caller may read it
 * (lookups are empty otherwise, so ids stay ids).
 */
export function useLogNames(lookups: LogLookups) {
  const { users, accountWide, agentNetworkOnly } = useSession();
  const named = (id: string, item: { name: string } | undefined, href: string): Named => ({
    id,
    name: item?.name,
    href: item ? href : undefined,
  });
  return {
    user: (id: string): Named => {
      const user = users.find((u) => u.id === id);
      const href = hrefOf("/logs", filtersToParams({ ...DEFAULT_FILTERS, user_id: id }));
      return { id, name: user ? user.name || user.email : undefined, href: accountWide ? href : undefined };
    },
    provider: (id: string) =>
      named(
        id,
        lookups.providers.find((p) => p.id === id),
        hrefOf("/config/providers"),
      ),
    policy: (id: string) =>
      named(
        id,
        lookups.policies.find((p) => p.id === id),
        hrefOf("/config/policies"),
      ),
    group: (id: string): Named => {
      const group = lookups.groups.find((g) => g.id === id);
      // The team page is hidden when the account shows only the agent network.
      return { ...named(id, group, hrefOf("/team")), ...(agentNetworkOnly ? { href: undefined } : {}) };
    },
  };
}

/**
 * A name, linked when it has a page, else `fallback` (a name the row itself carries), with the id
 * beside it when asked; the id alone when there is no name at all.
 */
export function NameLink(props: { named: Named; showId?: boolean; fallback?: string }) {
  const { id, name, href } = props.named;
  const label = name ?? (props.fallback || undefined);
  if (label === undefined) return <>{id || "—"}</>;
  return (
    <>
      {name !== undefined && href ? <a href={href}>{name}</a> : label}
      {props.showId && id ? <span className="hint"> ({id})</span> : null}
    </>
  );
}

/** What an MCP tool call's entry adds: the server and the tool by name, and what travelled each way. */
function ToolCall(props: { call: McpToolCall }) {
  const { call } = props;
  const fields: [string, string][] = [
    ["Server", call.server],
    ["Tool", call.tool],
    ["Request", `${formatTokens(call.request_bytes)} bytes`],
    ["Answer", `${formatTokens(call.response_bytes)} bytes`],
  ];
  return (
    <section aria-labelledby="log-tool-title">
      <h3 id="log-tool-title">MCP tool call</h3>
      <dl className="fields">
        {fields.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

/**
 * The attempts of a request the gateway retried or failed over, in order: the row's provider and
 * usage are the last one's, so this is where an operator sees that a fallback happened and why.
 */
function Attempts(props: { attempts: RequestAttempt[]; names: ReturnType<typeof useLogNames> }) {
  return (
    <section aria-labelledby="log-attempts-title">
      <h3 id="log-attempts-title">Attempts</h3>
      <p>{attemptsSummary(props.attempts)}</p>
      <table className="table" aria-labelledby="log-attempts-title">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Provider</th>
            <th scope="col">Model</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {props.attempts.map((attempt, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a request's attempts are listed whole and never reorder.
            <tr key={i}>
              <td>{i + 1}</td>
              <td>
                <NameLink named={props.names.provider(attempt.provider_id)} fallback={attempt.provider} />
              </td>
              <td>{attempt.model || "—"}</td>
              <td>{attemptOutcome(attempt)}</td>
              <td>{formatDuration(attempt.duration_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

const isCut = (entry: AccessLogEntryView) =>
  entry.request_prompt_truncated === true || entry.response_completion_truncated === true;

/**
 * The entry with its texts whole. Lists carry previews of long prompts and completions (flagged
 * as cut), so such an entry is read again by id; its preview shows until the whole one arrives.
 */
function useWholeTexts(entry: AccessLogEntryView) {
  const { api } = useSession();
  const cut = isCut(entry);
  const whole = useLoad(async () => (cut ? api.accessLog(entry.id) : entry), [entry.id, cut]);
  const shown = (whole.data?.id === entry.id ? whole.data : undefined) ?? entry;
  return { shown, loading: cut && whole.loading, error: whole.error };
}

/**
 * One access-log entry: the captured prompt and completion as a conversation first (what an
 * operator opens it for), then every field, ids named and linked where the caller may read the
 * configuration; and a permalink to copy.
 */
export function LogDrawer(props: { entry: AccessLogEntryView; onClose: () => void; lookups?: LogLookups }) {
  const names = useLogNames(useLogLookups(props.lookups));
  const e = props.entry;
  const texts = useWholeTexts(e);
  const permalink = `${window.location.origin}${window.location.pathname}${logEntryHash(e.id)}`;
  const rows: [string, ReactNode][] = [
    ["Log id", e.id],
    ["Time", formatDateTime(e.timestamp)],
    ["Decision", decisionText(e.decision, e.deny_reason)],
    ["Deny reason code", e.deny_reason || "—"],
    ["Status", String(e.status_code)],
    ["Duration", formatDuration(e.duration_ms)],
    ["User", <NameLink key="user" named={names.user(e.user_id)} showId />],
    [
      "Groups",
      e.group_ids.length === 0
        ? "—"
        : e.group_ids.map((id, i) => (
            <span key={id}>
              {i > 0 ? ", " : null}
              <NameLink named={names.group(id)} showId />
            </span>
          )),
    ],
    ["Session", e.session_id ? <SessionLink key="session" id={e.session_id} /> : "— (its own session)"],
    ["Method", e.method || "—"],
    ["Host", e.host || "—"],
    ["Path", e.path || "—"],
    ["Source IP", e.source_ip || "—"],
    [
      "Provider",
      <NameLink key="provider" named={names.provider(e.resolved_provider_id)} fallback={e.provider} showId />,
    ],
    ["Model", e.model || "—"],
    ["Policy", <NameLink key="policy" named={names.policy(e.selected_policy_id)} showId />],
    ["Service", e.service_id],
    ["Streaming", e.stream ? "yes" : "no"],
    ["Input tokens", formatTokens(e.input_tokens)],
    ["Output tokens", formatTokens(e.output_tokens)],
    ["Cached input tokens", formatTokens(e.cached_input_tokens)],
    ["Cache creation tokens", formatTokens(e.cache_creation_tokens)],
    ["Total tokens", formatTokens(e.total_tokens)],
    ["Input cost", formatUsd(e.input_cost_usd)],
    ["Cached input cost", formatUsd(e.cached_input_cost_usd)],
    ["Cache creation cost", formatUsd(e.cache_creation_cost_usd)],
    ["Cache cost", formatUsd(e.cache_cost_usd)],
    ["Output cost", formatUsd(e.output_cost_usd)],
    ["Cost", formatUsd(e.cost_usd)],
  ];
  return (
    <Drawer title={`Request ${e.id}`} onClose={props.onClose}>
      <div className="drawer-actions">
        <p>
          <Badge tone={e.decision === "deny" ? "bad" : "ok"}>{e.decision || "—"}</Badge>{" "}
          {decisionText(e.decision, e.deny_reason)}
        </p>
        <CopyButton text={permalink} what="link" showWhat />
      </div>
      <h3>Conversation</h3>
      {texts.loading ? <Progress label="Loading the whole conversation…" /> : null}
      <FormError error={texts.error} />
      {!texts.loading && isCut(texts.shown) ? (
        <p className="hint">
          Only the start of the prompt or the completion could be read, and is shown here.
        </p>
      ) : null}
      <Conversation prompt={texts.shown.request_prompt} completion={texts.shown.response_completion} />
      {e.attempts && e.attempts.length > 0 ? <Attempts attempts={e.attempts} names={names} /> : null}
      {e.tool_call ? <ToolCall call={e.tool_call} /> : null}
      <h3>Details</h3>
      <dl className="fields">
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
    </Drawer>
  );
}
