import type { AccessLogEntry, AccessLogSession } from "@agentnet/contracts";
import { useCallback, useState } from "react";
import { LogFilterBar, Pager, useFilteredList } from "../components/log-filters";
import { SortHeader } from "../components/sort-header";
import { Badge, EmptyState, LoadState, ScrollableTable } from "../components/ui";
import { decisionText } from "../domain/deny-reasons";
import { formatDateTime, formatDuration, formatTokens, formatUsd } from "../domain/format";
import { useLoad } from "../hooks";
import { Link, type Location } from "../router";
import { userLabel, useSession } from "../session";
import { LogDrawer } from "./log-drawer";

/** Where a session row leads: its page, or for a singleton (no session id) its one log entry. */
const sessionHref = (s: AccessLogSession): string =>
  s.session_id
    ? `/sessions/${encodeURIComponent(s.session_id)}`
    : `/logs?search=${encodeURIComponent(s.entries[0]?.id ?? "")}`;

export function SessionsPage(props: { location: Location }) {
  const { api, users, accountWide } = useSession();
  const { filters, apply, loaded: sessions } = useFilteredList(props.location, "/sessions", api.sessions);
  const header = (label: string, field: string, numeric = false) => (
    <SortHeader label={label} field={field} filters={filters} onApply={apply} numeric={numeric} />
  );
  const page = sessions.data;
  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">Sessions</h1>
      <p className="lede">
        Requests grouped by conversation or coding session; a request without a session id is a session of its
        own.
      </p>
      <LogFilterBar filters={filters} onApply={apply} />
      <LoadState loading={sessions.loading && !page} error={sessions.error} what="sessions" />
      {page && page.data.length === 0 ? (
        <EmptyState title="No sessions match">
          Clients that send an <code>x-session-id</code> header (Claude Code and Codex do it for you) are
          grouped here. Send traffic through the gateway (see <Link to="/agent">Agent config</Link>) or loosen
          the filters.
        </EmptyState>
      ) : null}
      {page && page.data.length > 0 ? (
        <>
          <ScrollableTable
            label="Sessions"
            columns={[
              header("Session", "session_id"),
              accountWide ? header("User", "user_id") : null,
              header("Started", "started_at"),
              header("Last activity", "timestamp"),
              header("Requests", "request_count", true),
              header("Tokens", "total_tokens", true),
              header("Cost", "cost_usd", true),
              "Models",
              header("Decision", "decision"),
            ]}
          >
            {page.data.map((s) => (
              <tr key={`${s.session_id}:${s.entries[0]?.id ?? ""}`}>
                <td>
                  <Link to={sessionHref(s)}>{s.session_id || "single request"}</Link>
                </td>
                {accountWide ? <td>{userLabel(users, s.user_id)}</td> : null}
                <td>{formatDateTime(s.started_at)}</td>
                <td>{formatDateTime(s.ended_at)}</td>
                <td className="num">{s.request_count}</td>
                <td className="num">{formatTokens(s.total_tokens)}</td>
                <td className="num">{formatUsd(s.cost_usd)}</td>
                <td>{s.models.join(", ")}</td>
                <td>
                  <Badge tone={s.decision === "deny" ? "bad" : "ok"}>{s.decision || "—"}</Badge>
                </td>
              </tr>
            ))}
          </ScrollableTable>
          <Pager page={page} unit="sessions" filters={filters} onApply={apply} />
        </>
      ) : null}
    </section>
  );
}

/** One session: its aggregates and its requests in order, as a timeline. */
export function SessionPage(props: { sessionId: string }) {
  const { api, users } = useSession();
  const loaded = useLoad(
    () => api.sessions({ session_id: props.sessionId, page_size: 1 }),
    [props.sessionId],
  );
  const [open, setOpen] = useState<AccessLogEntry | undefined>();
  const close = useCallback(() => setOpen(undefined), []);
  const session = loaded.data?.data[0];
  const entries = session
    ? [...session.entries].sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp))
    : [];
  const started = session ? Date.parse(session.started_at) : 0;
  return (
    <section aria-labelledby="session-title">
      <p>
        <Link to="/sessions">← All sessions</Link>
      </p>
      <h1 id="session-title">Session {props.sessionId}</h1>
      <LoadState loading={loaded.loading} error={loaded.error} what="the session" />
      {loaded.data && !session ? (
        <EmptyState title="No such session">
          It may be outside the retention window, or another user's. Go back to the list.
        </EmptyState>
      ) : null}
      {session ? (
        <>
          <dl className="totals">
            <div>
              <dt>User</dt>
              <dd>{userLabel(users, session.user_id)}</dd>
            </div>
            <div>
              <dt>Requests</dt>
              <dd>{session.request_count}</dd>
            </div>
            <div>
              <dt>Tokens</dt>
              <dd>{formatTokens(session.total_tokens)}</dd>
            </div>
            <div>
              <dt>Cost</dt>
              <dd>{formatUsd(session.cost_usd)}</dd>
            </div>
            <div>
              <dt>Span</dt>
              <dd>{formatDuration(Date.parse(session.ended_at) - started)}</dd>
            </div>
          </dl>
          <p>
            From {formatDateTime(session.started_at)} to {formatDateTime(session.ended_at)} · models{" "}
            {session.models.join(", ")} · providers {session.providers.join(", ")}
          </p>
          <ol className="timeline" aria-label="Requests in order">
            {entries.map((e, i) => (
              <li key={e.id} className={e.decision === "deny" ? "deny" : "allow"}>
                <button type="button" className="timeline-item" onClick={() => setOpen(e)}>
                  <span className="timeline-step">
                    #{i + 1} · +{formatDuration(Date.parse(e.timestamp) - started)}
                  </span>
                  <span className="timeline-main">
                    <strong>{e.model}</strong> {e.method} {e.path}
                  </span>
                  <span>{decisionText(e.decision, e.deny_reason)}</span>
                  <span className="num">
                    {formatTokens(e.total_tokens)} tokens · {formatUsd(e.cost_usd)} ·{" "}
                    {formatDuration(e.duration_ms)}
                  </span>
                </button>
              </li>
            ))}
          </ol>
        </>
      ) : null}
      {open ? <LogDrawer entry={open} onClose={close} /> : null}
    </section>
  );
}
