import { z } from "zod";

/** Absent bounds: the whole range a DateTime64(3) column can hold, so the SQL text never varies. */
const EARLIEST = new Date(0);
const LATEST = new Date(Date.UTC(2299, 11, 31));

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
 * filters match any of their values.
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
  AND startsWith(path, {path:String})
  AND ({search:String} = ''
    OR positionCaseInsensitiveUTF8(id, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(host, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(path, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(model, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(user_email, {search:String}) > 0
    OR positionCaseInsensitiveUTF8(user_name, {search:String}) > 0)`;

// A bound before 1970 cannot be spelled for DateTime64; nothing is stored before then anyway.
const bound = (value: string | undefined, absent: Date): Date => {
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
