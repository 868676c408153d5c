import { z } from "zod";

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
 * One fixed WHERE clause: an absent filter binds a neutral value ('' or an empty array) that the
 * clause treats as "any", so every combination of filters runs the same SQL text. Repeatable
 * filters match any of their values. Every such term is spelled `(absent OR test)` so that the
 * engine folds it to true and never reads the column when the filter is absent.
 */
export const USAGE_WHERE = `account_id = {account:String}
  AND timestamp >= {from:DateTime64(3)} AND timestamp <= {to:DateTime64(3)}
  AND ({user:String} = '' OR user_id = {user:String})
  AND ({session:String} = '' OR session_id = {session:String})
  AND (empty({groups:Array(String)}) OR hasAny(group_ids, {groups:Array(String)}))
  AND (empty({providers:Array(String)}) OR has({providers:Array(String)}, resolved_provider_id))
  AND (empty({models:Array(String)}) OR has({models:Array(String)}, model))`;

/** Search matches the log id, host, path, model, user email or name, case-insensitively. */
export const LOG_WHERE = `${USAGE_WHERE}
  AND ({decision:String} = '' OR decision = {decision:String})
  AND ({path:String} = '' OR startsWith(path, {path:String}))
  AND ({search:String} = ''
    OR positionCaseInsensitiveUTF8(id, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(host, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(path, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(model, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(user_email, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(user_name, {search:String}) > 0)`;

// A bound before 1970 cannot be spelled for DateTime64; nothing is stored before then anyway.
export const bound = (value: string | undefined, absent: Date): Date => {
  if (value === undefined) return absent;
  const at = new Date(value);
  return at.getTime() < 0 ? EARLIEST : at;
};

export function bindUsageFilters(filters: UsageFilterParams): Record<string, unknown> {
  return {
    account: filters.account_id,
    from: bound(filters.start_date, EARLIEST),
    to: bound(filters.end_date, LATEST),
    user: filters.user_id ?? "",
    session: filters.session_id ?? "",
    groups: filters.group_id ?? [],
    providers: filters.provider_id ?? [],
    models: filters.model ?? [],
  };
}

export function bindLogFilters(filters: LogFilterParams): Record<string, unknown> {
  return {
    ...bindUsageFilters(filters),
    search: filters.search ?? "",
    decision: filters.decision ?? "",
    path: filters.path ?? "",
  };
}

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
