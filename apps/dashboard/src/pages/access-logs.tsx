import type { AccessLogEntry } from "@agentnet/contracts";
import { type KeyboardEvent, type MouseEvent, useEffect, useRef, useState } from "react";
import { saveFile } from "../components/download";
import { LogFilterBar, Pager, useFilteredList, useLogLookups } from "../components/log-filters";
import { SortHeader } from "../components/sort-header";
import { Badge, Check, EmptyState, FormError, LoadState, Progress, ScrollableTable } from "../components/ui";
import { denyReasonText } from "../domain/deny-reasons";
import {
  type LogFilters,
  type LogView,
  liveTailFilters,
  logViewParams,
  parseLogView,
} from "../domain/filters";
import { formatDateTime, formatDuration, formatTimeOfDay, formatTokens, formatUsd } from "../domain/format";
import {
  collectEntries,
  type ExportFormat,
  exportFile,
  exportFileName,
  exportQuery,
  exportSummary,
} from "../domain/log-export";
import { useLoad, useSubmit } from "../hooks";
import { Link, type Location, navigate } from "../router";
import { useSession } from "../session";
import { LogDrawer, NameLink, SessionLink, useLogNames } from "./log-drawer";

/** How often live tail reads the newest requests. */
const LIVE_TAIL_MS = 5_000;

export function AccessLogsPage(props: { location: Location }) {
  const { api, accountWide } = useSession();
  const { query, filters, loaded: logs } = useFilteredList(props.location, "/logs", api.accessLogs);
  const view = parseLogView(props.location.params);
  const lookups = useLogLookups();
  const names = useLogNames(lookups);
  const page = logs.data;

  // Filters are a new view (a history entry, the drawer closed); live tail and the drawer only
  // change how this one is watched.
  const apply = (next: LogFilters) => navigate("/logs", logViewParams(next, { ...view, entry: "" }));
  const showView = (next: LogView, nextFilters = filters) =>
    navigate("/logs", logViewParams(nextFilters, next), true);
  const openEntry = (entry: AccessLogEntry) => showView({ ...view, entry: entry.id });
  const close = () => showView({ ...view, entry: "" });
  const setLive = (live: boolean) => showView({ ...view, live }, live ? liveTailFilters(filters) : filters);

  // A permalink's entry is usually on the page; when not, it is read by id.
  const listed = view.entry ? page?.data.find((e) => e.id === view.entry) : undefined;
  const lookedUp = useLoad(
    async () => (view.entry !== "" && !listed ? ((await api.accessLog(view.entry)) ?? null) : undefined),
    [view.entry, listed === undefined],
  );
  const found = lookedUp.data;
  const open = listed ?? (found && found.id === view.entry ? found : undefined);
  const missing = view.entry !== "" && found === null && !lookedUp.loading;
  const paused = view.entry !== "";
  const arrived = useLiveTail(view.live && !paused, logs.reload, query, page?.data);

  const onRowClick = (event: MouseEvent, entry: AccessLogEntry) => {
    // A link inside the row (user, session, provider) goes where it points, not to the drawer.
    if (event.target instanceof Element && event.target.closest("a")) return;
    openEntry(entry);
  };
  const onRowKey = (event: KeyboardEvent, entry: AccessLogEntry) => {
    if (event.target !== event.currentTarget) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      openEntry(entry);
    }
  };
  const header = (label: string, field: string, numeric = false) => (
    <SortHeader label={label} field={field} filters={filters} onApply={apply} numeric={numeric} />
  );
  return (
    <section aria-labelledby="logs-title">
      <h1 id="logs-title">Access logs</h1>
      <p className="lede">
        {accountWide ? "Every request through the gateway." : "Your own requests through the gateway."} The
        filters are in the address bar: copy it to share this view.
      </p>
      <LogFilterBar filters={filters} onApply={apply} lookups={lookups} />
      <div className="toolbar logs-toolbar">
        <Check
          label="Live tail"
          checked={view.live}
          onChange={setLive}
          hint={`the newest requests, every ${LIVE_TAIL_MS / 1000} s`}
        />
        {page && page.total_records > 0 ? <ExportButtons filters={filters} /> : null}
      </div>
      <p className="hint live-status" role="status">
        {liveTailStatus(view.live, paused, arrived)}
      </p>
      <LoadState loading={logs.loading && !page} error={logs.error} what="access logs" />
      {logs.loading && page && !view.live ? <Progress label="Refreshing…" /> : null}
      <FormError error={lookedUp.error} />
      {missing ? (
        <EmptyState title={`No request ${view.entry}`}>
          It may be past the log retention window, or another user's.{" "}
          <button type="button" className="ghost" onClick={close}>
            Dismiss
          </button>
        </EmptyState>
      ) : null}
      {page && page.data.length === 0 ? (
        <EmptyState title="No requests match">
          {query ? "Clear or loosen the filters. " : ""}Requests appear here once they go through the gateway
          with log collection on (see <Link to="/agent">Agent config</Link>).
        </EmptyState>
      ) : null}
      {page && page.data.length > 0 ? (
        <>
          <ScrollableTable
            label="Access log entries"
            columns={[
              header("Time", "timestamp"),
              accountWide ? header("User", "user_id") : null,
              header("Session", "session_id"),
              header("Model", "model"),
              header("Provider", "provider"),
              header("Decision", "decision"),
              header("Status", "status_code", true),
              header("Tokens", "total_tokens", true),
              header("Cost", "cost_usd", true),
              header("Duration", "duration_ms", true),
            ]}
          >
            {page.data.map((e) => (
              <tr
                key={e.id}
                tabIndex={0}
                className="clickable"
                onClick={(ev) => onRowClick(ev, e)}
                onKeyDown={(ev) => onRowKey(ev, e)}
                aria-label={`Request ${e.id}, open details`}
              >
                <td>{formatDateTime(e.timestamp)}</td>
                {accountWide ? (
                  <td>
                    <NameLink named={names.user(e.user_id)} />
                  </td>
                ) : null}
                <td>
                  <SessionLink id={e.session_id} />
                </td>
                <td>{e.model}</td>
                <td>
                  <NameLink named={names.provider(e.resolved_provider_id)} fallback={e.provider} />
                </td>
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
          </ScrollableTable>
          <Pager page={page} unit="requests" filters={filters} onApply={apply} />
        </>
      ) : null}
      {open ? <LogDrawer key={open.id} entry={open} onClose={close} lookups={lookups} /> : null}
    </section>
  );
}

interface Arrival {
  count: number;
  at: string;
}

/**
 * Live tail: reads the list again every few seconds while `on` (and the tab is visible), and
 * says how many requests the last read brought that the one before did not have.
 */
function useLiveTail(on: boolean, reload: () => void, query: string, rows: AccessLogEntry[] | undefined) {
  const seen = useRef({ query, ids: new Set<string>() });
  const [arrived, setArrived] = useState<Arrival | undefined>();
  useEffect(() => {
    if (!on) return;
    const timer = window.setInterval(() => {
      if (document.visibilityState === "visible") reload();
    }, LIVE_TAIL_MS);
    return () => window.clearInterval(timer);
  }, [on, reload]);
  // Judged when rows arrive, which are the answer for the current query (useLoad drops older ones);
  // rows of another query are another list, not new requests.
  // biome-ignore lint/correctness/useExhaustiveDependencies: only an answer is news, not a changed filter.
  useEffect(() => {
    if (!rows) return;
    const before = seen.current;
    const fresh = rows.filter((e) => !before.ids.has(e.id)).length;
    if (on && before.query === query && fresh > 0) {
      setArrived({ count: fresh, at: formatTimeOfDay(new Date()) });
    }
    seen.current = { query, ids: new Set(rows.map((e) => e.id)) };
  }, [rows]);
  useEffect(() => {
    if (!on) setArrived(undefined);
  }, [on]);
  return arrived;
}

/** What the live-tail status line says; it changes only when there is news, so it is read out then. */
function liveTailStatus(live: boolean, paused: boolean, arrived: Arrival | undefined): string {
  if (!live) return "";
  if (paused) return "Live tail is paused while a request is open.";
  if (arrived) {
    return `Live tail: ${arrived.count} new ${arrived.count === 1 ? "request" : "requests"} at ${arrived.at}.`;
  }
  return `Live tail is on: the newest requests are read every ${LIVE_TAIL_MS / 1000} seconds.`;
}

/** Export of every row the filters match (up to the cap) as CSV or JSON. */
function ExportButtons(props: { filters: LogFilters }) {
  const { api } = useSession();
  const submit = useSubmit();
  const [progress, setProgress] = useState<string | undefined>();
  const [summary, setSummary] = useState<string | undefined>();
  const run = (format: ExportFormat) => {
    setSummary(undefined);
    void submit
      .run(async () => {
        const startedAt = new Date();
        const query = exportQuery(props.filters, startedAt);
        const result = await collectEntries(
          (page) => api.accessLogs({ ...query, page }),
          (read, total) =>
            setProgress(
              `Exporting… ${read.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} requests`,
            ),
          (id) => api.accessLog(id),
        );
        const name = exportFileName(format, startedAt);
        const file = exportFile(format, result.entries);
        saveFile(new Blob([file.text], { type: file.type }), name);
        setSummary(exportSummary(result, name));
      })
      .then(() => setProgress(undefined));
  };
  return (
    <div className="export">
      <button type="button" className="secondary" disabled={submit.busy} onClick={() => run("csv")}>
        Export CSV
      </button>
      <button type="button" className="secondary" disabled={submit.busy} onClick={() => run("json")}>
        Export JSON
      </button>
      {progress ? <Progress label={progress} /> : null}
      {summary ? (
        <p className="hint" role="status">
          {summary}
        </p>
      ) : null}
      <FormError error={submit.error} />
    </div>
  );
}
