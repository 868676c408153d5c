import { type Handler, maxPayloadOf, serve } from "@agentnet/bus";
import { AppError, type Endpoint, notFound, QUEUE, Telemetry } from "@agentnet/contracts";
import { pageOffset, toPage } from "../domain/pages";
import { fitEntries, fitEntry, fitSessions, previewChars, replyBudget } from "../domain/reply-budget";
import { scopeToCaller } from "../domain/scope";
import { sessionDecision, sessionSortColumn } from "../domain/sessions";
import { accessLogCount, accessLogEntry, readAccessLogPage } from "../store/access-logs";
import { readUsageBreakdown, readUsageSeries } from "../store/analytics";
import { readSessionPage } from "../store/session-page";
import { sessionCount } from "../store/sessions";
import { readUsageOverview } from "../store/usage";
import type { TelemetryContext } from "./context";
import type { SettingsReader } from "./settings";

/**
 * Only entries whose lists are huge (thousands of group ids) can outgrow their share of a reply
 * once their free text is cut (domain/reply-budget.ts); a smaller page gives each a larger one.
 */
const pageTooLarge = (items: string) =>
  new AppError(
    413,
    "payload_too_large",
    `this page's ${items} are too large to answer at once, even cut; ask for a smaller page_size`,
  );

/**
 * The three spec reads (endpoints 1-3), one entry by id, and the usage analytics beyond the spec
 * (series and breakdown), each scoped to the caller before any query runs.
 */
export function registerReadHandlers(ctx: TelemetryContext, settings: SettingsReader) {
  const { warehouse } = ctx;
  const handle = <E extends Endpoint>(endpoint: E, handler: Handler<E>) =>
    serve(ctx.nc, endpoint, handler, {
      queue: QUEUE.telemetry,
      onUnexpectedError: (err, subject) => ctx.logger.error({ err, subject }, "read failed"),
    });

  // Spec: logs and sessions are "available only when the account has log collection enabled;
  // otherwise entries are not retained". We answer an empty page (200), not an error: a
  // dashboard shows "no entries" and the usage overview still has the numbers.
  const logsAvailable = async (caller: Parameters<SettingsReader["get"]>[0]) =>
    (await settings.get(caller)).enable_log_collection;
  // Read per answer: after a reconnect the server may be another one, with another limit.
  const budget = () => replyBudget(maxPayloadOf(ctx.nc));

  handle(Telemetry.accessLogs, async ({ caller, query }) => {
    if (!(await logsAvailable(caller))) return toPage([], query.page, query.page_size, 0);
    const filters = { ...scopeToCaller(caller, query), account_id: caller.account_id };
    const total = accessLogCount.run(warehouse, filters).then((rows) => rows[0]?.total ?? 0);
    const room = budget();
    const rows = await readAccessLogPage(
      warehouse,
      {
        ...filters,
        limit: query.page_size,
        offset: pageOffset(query.page, query.page_size),
        preview_chars: previewChars(room, query.page_size),
      },
      total,
    );
    const { entries } = fitEntries(rows, room);
    if (entries.length < rows.length) throw pageTooLarge("entries");
    return toPage(entries, query.page, query.page_size, await total);
  });

  // Members read only their own entries: another's is as absent as one that never was (404).
  handle(Telemetry.accessLog, async ({ caller, log_id }) => {
    if (!(await logsAvailable(caller))) throw notFound("access log entry");
    const scoped = { ...scopeToCaller(caller, {}), account_id: caller.account_id, id: log_id };
    const [stored] = await accessLogEntry.run(warehouse, scoped);
    if (!stored) throw notFound("access log entry");
    const room = budget();
    const { entry, bytes } = fitEntry(stored, room);
    if (bytes > room) {
      throw new AppError(
        413,
        "payload_too_large",
        "this entry is too large to answer, even with its texts cut",
      );
    }
    return entry;
  });

  handle(Telemetry.sessions, async ({ caller, query }) => {
    if (!(await logsAvailable(caller))) return toPage([], query.page, query.page_size, 0);
    const filters = { ...scopeToCaller(caller, query), account_id: caller.account_id };
    const room = budget();
    const [sessions, counted] = await Promise.all([
      readSessionPage(warehouse, {
        ...filters,
        sort_column: sessionSortColumn(query.sort_by),
        sort_order: query.sort_order,
        limit: query.page_size,
        offset: pageOffset(query.page, query.page_size),
        budget: room,
      }),
      sessionCount.run(warehouse, filters),
    ]);
    const data = fitSessions(
      sessions.map(({ singleton_id, denied_entries, ...session }) => ({
        ...session,
        decision: sessionDecision(denied_entries),
      })),
      room,
    );
    if (!data) throw pageTooLarge("sessions");
    return toPage(data, query.page, query.page_size, counted[0]?.total ?? 0);
  });

  // Usage is kept whatever log collection says (spec), so the overview never asks for settings.
  handle(Telemetry.usageOverview, async ({ caller, query }) =>
    readUsageOverview(warehouse, { ...scopeToCaller(caller, query), account_id: caller.account_id }),
  );
  handle(Telemetry.usageSeries, async ({ caller, query }) =>
    readUsageSeries(warehouse, { ...scopeToCaller(caller, query), account_id: caller.account_id }),
  );
  // Scoped like every usage read, not refused: a member's breakdown by user is their own row, and
  // by group the groups their own requests were made in.
  handle(Telemetry.usageBreakdown, async ({ caller, query }) =>
    readUsageBreakdown(warehouse, { ...scopeToCaller(caller, query), account_id: caller.account_id }),
  );
}
