import type { AccessLogEntry } from "@agentnet/contracts";
import { type KeyboardEvent, useCallback, useState } from "react";
import { LogFilterBar, Pager, useFilteredList } from "../components/log-filters";
import { SortHeader } from "../components/sort-header";
import { Badge, EmptyState, LoadState, Progress } from "../components/ui";
import { denyReasonText } from "../domain/deny-reasons";
import { formatDateTime, formatDuration, formatTokens, formatUsd } from "../domain/format";
import { Link, type Location } from "../router";
import { userLabel, useSession } from "../session";
import { LogDrawer } from "./log-drawer";

export function AccessLogsPage(props: { location: Location }) {
  const { api, users, accountWide } = useSession();
  const { query, filters, apply, loaded: logs } = useFilteredList(props.location, "/logs", api.accessLogs);
  const [open, setOpen] = useState<AccessLogEntry | undefined>();
  const close = useCallback(() => setOpen(undefined), []);
  const onRowKey = (event: KeyboardEvent, entry: AccessLogEntry) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      setOpen(entry);
    }
  };
  const header = (label: string, field: string, numeric = false) => (
    <SortHeader label={label} field={field} filters={filters} onApply={apply} numeric={numeric} />
  );
  const page = logs.data;
  return (
    <section aria-labelledby="logs-title">
      <h1 id="logs-title">Access logs</h1>
      <p className="lede">
        {accountWide ? "Every request through the gateway." : "Your own requests through the gateway."} The
        filters are in the address bar: copy it to share this view.
      </p>
      <LogFilterBar filters={filters} onApply={apply} />
      <LoadState loading={logs.loading && !page} error={logs.error} what="access logs" />
      {logs.loading && page ? <Progress label="Refreshing…" /> : null}
      {page && page.data.length === 0 ? (
        <EmptyState title="No requests match">
          {query ? "Clear or loosen the filters. " : ""}Requests appear here once they go through the gateway
          with log collection on (see <Link to="/agent">Agent config</Link>).
        </EmptyState>
      ) : null}
      {page && page.data.length > 0 ? (
        <>
          <div className="table-wrap">
            <table className="table" aria-label="Access log entries">
              <thead>
                <tr>
                  {header("Time", "timestamp")}
                  {accountWide ? header("User", "user_id") : null}
                  {header("Model", "model")}
                  {header("Provider", "provider")}
                  {header("Decision", "decision")}
                  {header("Status", "status_code", true)}
                  {header("Tokens", "total_tokens", true)}
                  {header("Cost", "cost_usd", true)}
                  {header("Duration", "duration_ms", true)}
                </tr>
              </thead>
              <tbody>
                {page.data.map((e) => (
                  <tr
                    key={e.id}
                    tabIndex={0}
                    className="clickable"
                    onClick={() => setOpen(e)}
                    onKeyDown={(ev) => onRowKey(ev, e)}
                    aria-label={`Request ${e.id}, open details`}
                  >
                    <td>{formatDateTime(e.timestamp)}</td>
                    {accountWide ? <td>{userLabel(users, e.user_id)}</td> : null}
                    <td>{e.model}</td>
                    <td>{e.provider}</td>
                    <td>
                      <Badge tone={e.decision === "deny" ? "bad" : "ok"}>
                        {e.decision === "deny" ? "Denied" : "Allowed"}
                      </Badge>
                      {e.deny_reason ? <span className="reason">{denyReasonText(e.deny_reason)}</span> : null}
                    </td>
                    <td className="num">{e.status_code}</td>
                    <td className="num">{formatTokens(e.total_tokens)}</td>
                    <td className="num">{formatUsd(e.cost_usd)}</td>
                    <td className="num">{formatDuration(e.duration_ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={page} unit="requests" filters={filters} onApply={apply} />
        </>
      ) : null}
      {open ? <LogDrawer entry={open} onClose={close} /> : null}
    </section>
  );
}
