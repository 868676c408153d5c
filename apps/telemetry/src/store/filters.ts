import { z } from "zod";
import { ACCESS_LOGS, ACCESS_LOGS_BY_USER } from "./events";

/** Absent bounds: the whole range a DateTime64(3) column can hold, so the SQL text never varies. */
export const EARLIEST = new Date(0);
export const LATEST = new Date(Date.UTC(2299, 11, 31));

/** The filters every read shares (spec: usage filters), after caller scoping. */
export const UsageFilterParams = z.object({
  account_id: z.string().min(1),
  start_date: z.string().optional(),
  end_date: z.string().optional(),
  user_id: z.string().optional(),
  session_id: z.string().optional(),
  group_id: z.array(z.string()).optional(),
  provider_id: z.array(z.string()).optional(),
  model: z.array(z.string()).optional(),
});
export type UsageFilterParams = z.infer<typeof UsageFilterParams>;

/** The log list's further filters. */
export const LogFilterParams = UsageFilterParams.extend({
  search: z.string().optional(),
  decision: z.string().optional(),
  path: z.string().optional(),
});
export type LogFilterParams = z.infer<typeof LogFilterParams>;

/**
 * A filter's term and the parameters it binds. Only present filters appear in the SQL text (each
 * one a fixed fragment; values stay `{name:Type}` placeholders): an absent filter that still
 * named its column, even as `({x} = '' OR ...)`, or a 1970–2299 time range, made FINAL reads
 * slower by a half at millions of rows. Repeatable filters match any of their values.
 */
interface Term<F> {
  present: (filters: F) => boolean;
  sql: string;
  bind: (filters: F) => Record<string, unknown>;
}

/** The account and the dimensions usage_hourly keeps (everything but time and session). */
const DIMENSION_TERMS: Term<UsageFilterParams>[] = [
  { present: () => true, sql: "account_id = {account:String}", bind: (f) => ({ account: f.account_id }) },
  {
    present: (f) => f.user_id !== undefined,
    sql: "user_id = {user:String}",
    bind: (f) => ({ user: f.user_id }),
  },
  {
    present: (f) => (f.group_id?.length ?? 0) > 0,
    sql: "hasAny(group_ids, {groups:Array(String)})",
    bind: (f) => ({ groups: f.group_id }),
  },
  {
    present: (f) => (f.provider_id?.length ?? 0) > 0,
    sql: "has({providers:Array(String)}, resolved_provider_id)",
    bind: (f) => ({ providers: f.provider_id }),
  },
  {
    present: (f) => (f.model?.length ?? 0) > 0,
    sql: "has({models:Array(String)}, model)",
    bind: (f) => ({ models: f.model }),
  },
];

const USAGE_TERMS: Term<UsageFilterParams>[] = [
  ...DIMENSION_TERMS,
  {
    present: (f) => f.start_date !== undefined,
    sql: "timestamp >= {from:DateTime64(3)}",
    bind: (f) => ({ from: bound(f.start_date, EARLIEST) }),
  },
  {
    present: (f) => f.end_date !== undefined,
    sql: "timestamp <= {to:DateTime64(3)}",
    bind: (f) => ({ to: bound(f.end_date, LATEST) }),
  },
  {
    present: (f) => f.session_id !== undefined,
    sql: "session_id = {session:String}",
    bind: (f) => ({ session: f.session_id }),
  },
];

/**
 * Search matches the log id, host, path, model, user email or name, case-insensitively. The last
 * five are read from search_text, those fields joined by NUL (infra/clickhouse/004_rollups.sql),
 * unless the search itself holds a NUL, which could match across the joins.
 */
const LOG_TERMS: Term<LogFilterParams>[] = [
  ...USAGE_TERMS,
  {
    present: (f) => f.decision !== undefined,
    sql: "decision = {decision:String}",
    bind: (f) => ({ decision: f.decision }),
  },
  {
    present: (f) => f.path !== undefined,
    sql: "startsWith(path, {path:String})",
    bind: (f) => ({ path: f.path }),
  },
  {
    present: (f) => f.search !== undefined && !f.search.includes("\0"),
    sql: `(positionCaseInsensitiveUTF8(id, {search:String}) > 0
      OR positionCaseInsensitiveUTF8(search_text, {search:String}) > 0)`,
    bind: (f) => ({ search: f.search }),
  },
  {
    present: (f) => f.search?.includes("\0") === true,
    sql: `(positionCaseInsensitiveUTF8(id, {search:String}) > 0
      OR positionCaseInsensitiveUTF8(host, {search:String}) > 0
      OR positionCaseInsensitiveUTF8(path, {search:String}) > 0
      OR positionCaseInsensitiveUTF8(model, {search:String}) > 0
      OR positionCaseInsensitiveUTF8(user_email, {search:String}) > 0
      OR positionCaseInsensitiveUTF8(user_name, {search:String}) > 0)`,
    bind: (f) => ({ search: f.search }),
  },
];

const whereOf =
  <F>(terms: Term<F>[]) =>
  (filters: F): string =>
    terms
      .filter((term) => term.present(filters))
      .map((term) => term.sql)
      .join("\n  AND ");
const bindOf =
  <F>(terms: Term<F>[]) =>
  (filters: F): Record<string, unknown> =>
    Object.assign({}, ...terms.filter((term) => term.present(filters)).map((term) => term.bind(filters)));

/** The WHERE clause of usage reads and its parameters. */
export const usageWhere = whereOf(USAGE_TERMS);
export const bindUsageFilters = bindOf(USAGE_TERMS);
/** Whether the filters name a user, group, provider or model (not just the account). */
export const namesDimension = (filters: UsageFilterParams): boolean =>
  DIMENSION_TERMS.filter((term) => term.present(filters)).length > 1;
/** The same on usage_hourly: its dimensions only (no time, no session). */
export const dimensionWhere = whereOf(DIMENSION_TERMS);
export const bindDimensionFilters = bindOf(DIMENSION_TERMS);
/** The WHERE clause of access-log and session reads and its parameters. */
export const logWhere = whereOf(LOG_TERMS);
export const bindLogFilters = bindOf(LOG_TERMS);

/**
 * The table a filtered count reads: access_logs_by_user (infra/clickhouse/005_log_read_paths.sql)
 * when the filters name a user, where that user's rows are one range of the primary index instead
 * of one row in every few of the account's. It holds every column a filter reads except the five
 * a search with a NUL falls back to.
 */
export const countedTable = (filters: LogFilterParams): string =>
  filters.user_id !== undefined && filters.search?.includes("\0") !== true
    ? ACCESS_LOGS_BY_USER
    : ACCESS_LOGS;

/** True when a read is over the account's whole log: no filter but the account. */
export const unfiltered = (filters: LogFilterParams): boolean =>
  LOG_TERMS.filter((term) => term.present(filters)).length === 1;

// A bound before 1970 cannot be spelled for DateTime64; nothing is stored before then anyway.
export const bound = (value: string | undefined, absent: Date): Date => {
  if (value === undefined) return absent;
  const at = new Date(value);
  return at.getTime() < 0 ? EARLIEST : at;
};

/** The first window a newest-first read looks at; it grows 4× until it holds the page. */
export const FIRST_WINDOW_MS = 3_600_000;

/**
 * Newest-first reads (the default order of both lists) look at [since, end] windows that grow 4×
 * from an hour before now (or before end_date) back to start_date: partition and primary-key
 * pruning then read a few parts near the page instead of a granule of every part of the account.
 * Anything after the anchor (clock skew) is inside every window, so windows only ever grow.
 */
export function* newestFirstWindows(filters: UsageFilterParams): Generator<{ since: Date; last: boolean }> {
  const from = bound(filters.start_date, EARLIEST).getTime();
  const anchor = Math.min(Date.now(), bound(filters.end_date, LATEST).getTime());
  for (let span = FIRST_WINDOW_MS; ; span *= 4) {
    const since = Math.max(from, anchor - span);
    yield { since: new Date(since), last: since <= from };
    if (since <= from) return;
  }
}
