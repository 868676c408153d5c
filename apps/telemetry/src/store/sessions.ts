import { z } from "zod";
import { costNumbers, LIST_FIELDS, LIST_TUPLE, ListColumns, tokenNumbers, toListEntry } from "./entries";
import { ACCESS_LOGS } from "./events";
import { bindLogFilters, countedTable, LogFilterParams, logWhere, unfiltered } from "./filters";
import { ChNumber, ChTimestamp, defineQuery } from "./query";
import { ROLLED_BINDS, ROLLED_UNTIL } from "./rollup";

/**
 * Matching entries with each request id once (FINAL collapses a redelivered event that still sits
 * in an unmerged part), plus the session key: a request without a session id is its own singleton
 * session, keyed by its request id (`singleton_id`); a real session has an empty singleton_id.
 */
const matchingEntries = (filters: LogFilterParams, table = ACCESS_LOGS) => `matching AS (
  SELECT *, if(session_id = '', id, '') AS singleton_id FROM ${table} FINAL WHERE ${logWhere(filters)}
)`;

/**
 * The matching entries of some sessions only: real sessions by id (the session_id bloom filter
 * reads just the granules holding them, over the whole filter range) and singletons by request
 * id, which are active at or after {since} (a singleton's one entry is its last activity). No
 * FINAL, which would not use the bloom filter and so read every entry of the account: these are
 * a page's worth of rows, and `LIMIT 1 BY id` drops redelivered copies among them.
 */
const keyedEntries = (filters: LogFilterParams) => `matching AS (
  SELECT *, '' AS singleton_id FROM access_logs
  WHERE ${logWhere(filters)} AND session_id != '' AND has({sessions:Array(String)}, session_id)
  LIMIT 1 BY id
  UNION ALL
  SELECT *, id AS singleton_id FROM access_logs
  WHERE ${logWhere(filters)} AND session_id = '' AND timestamp >= {since:DateTime64(3)} AND has({singletons:Array(String)}, id)
  LIMIT 1 BY id
)`;

/** Session sums carry the contract's names, so the sort column can name them. */
const SESSION_AGGREGATES = `
  argMin(user_id, timestamp) AS user_id,
  groupUniqArrayArray(group_ids) AS group_ids,
  min(timestamp) AS started_at,
  max(timestamp) AS ended_at,
  count() AS request_count,
  sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(total_tokens) AS total_tokens,
  sum(cached_input_tokens) AS cached_input_tokens, sum(cache_creation_tokens) AS cache_creation_tokens,
  sum(cost_usd) AS cost_usd, sum(input_cost_usd) AS input_cost_usd,
  sum(cached_input_cost_usd) AS cached_input_cost_usd, sum(cache_creation_cost_usd) AS cache_creation_cost_usd,
  sum(output_cost_usd) AS output_cost_usd, sum(cache_cost_usd) AS cache_cost_usd,
  groupUniqArray(provider) AS providers,
  groupUniqArray(model) AS models,
  countIf(decision = 'deny') AS denied_entries`;

/**
 * At most this many entries per session travel in a page, fewer when the session's share of the
 * answer cannot hold them (domain/reply-budget.ts); request_count tells how many there are.
 */
export const MAX_ENTRIES_PER_SESSION = 100;

/** Some sessions by key; singletons were active at or after `since` (see keyedEntries). */
export const SessionKeyParams = LogFilterParams.extend({
  session_ids: z.array(z.string()),
  singleton_ids: z.array(z.string()),
  since: z.date(),
  /** Entries listed per session, and code points of each captured text they carry (its preview). */
  entries: z.number().int().min(1).max(MAX_ENTRIES_PER_SESSION),
  preview_chars: z.number().int().min(1),
});
const bindSessionKeys = (params: z.output<typeof SessionKeyParams>) => ({
  ...bindLogFilters(params),
  sessions: params.session_ids,
  singletons: params.singleton_ids,
  since: params.since,
  entries: params.entries,
  preview_chars: params.preview_chars,
});

const PageParams = LogFilterParams.extend({
  sort_column: z.string().regex(/^[a-z_]+$/),
  sort_order: z.enum(["ascending", "descending"]),
  limit: z.number().int().min(1),
  offset: z.number().int().min(0),
});

export const SessionRow = z.object({
  session_id: z.string(),
  singleton_id: z.string(),
  user_id: z.string(),
  group_ids: z.array(z.string()),
  started_at: ChTimestamp,
  ended_at: ChTimestamp,
  request_count: ChNumber,
  ...tokenNumbers,
  ...costNumbers,
  providers: z.array(z.string()),
  models: z.array(z.string()),
  denied_entries: ChNumber,
});
export type SessionRow = z.infer<typeof SessionRow>;

const direction = (order: "ascending" | "descending") => (order === "ascending" ? "ASC" : "DESC");

/** One page of sessions, ordered by a session-level column; the session key breaks ties. */
export const sessionPage = defineQuery({
  name: "session_page",
  params: PageParams,
  row: SessionRow,
  sql: (params) => {
    const dir = direction(params.sort_order);
    return `WITH ${matchingEntries(params)}
      SELECT * FROM (
        SELECT session_id, singleton_id, ${SESSION_AGGREGATES}, toUInt8(denied_entries > 0) AS denied
        FROM matching GROUP BY session_id, singleton_id
      )
      ORDER BY {sort:Identifier} ${dir}, session_id ${dir}, singleton_id ${dir}
      LIMIT {limit:UInt32} OFFSET {offset:UInt64}`;
  },
  bind: (params) => ({
    ...bindLogFilters(params),
    sort: params.sort_column,
    limit: params.limit,
    offset: params.offset,
  }),
});

/**
 * Matching sessions (the page unit), singletons included. Over the whole log, real sessions are
 * counted from access_log_session_keys (one row per session once merged) instead of hashing every
 * entry's session_id, and singletons of rolled hours from access_log_hourly; with filters, a
 * session counts when one of its entries matches, so the entries are read (a user's from the
 * user-sorted copy, `countedTable`).
 */
export const sessionCount = defineQuery({
  name: "session_count",
  params: LogFilterParams,
  row: z.object({ total: ChNumber }),
  // Singletons are rows (FINAL made them unique); only real sessions need a distinct count.
  sql: (params) =>
    unfiltered(params)
      ? `SELECT
          (SELECT count() FROM access_log_session_keys FINAL WHERE account_id = {account:String})
          + (SELECT sum(singletons) FROM access_log_hourly FINAL
             WHERE account_id = {account:String} AND hour < ${ROLLED_UNTIL})
          + (SELECT count() FROM access_logs FINAL
             WHERE account_id = {account:String} AND timestamp >= ${ROLLED_UNTIL} AND session_id = '') AS total`
      : `WITH ${matchingEntries(params, countedTable(params))}
    SELECT countIf(singleton_id != '') + uniqExactIf(session_id, singleton_id = '') AS total FROM matching`,
  bind: (params) => ({ ...bindLogFilters(params), ...(unfiltered(params) ? ROLLED_BINDS : {}) }),
});

const EntryTuple = z
  .array(z.unknown())
  .transform((values) =>
    toListEntry(ListColumns.parse(Object.fromEntries(LIST_FIELDS.map((field, i) => [field, values[i]])))),
  );

/**
 * Some sessions by key, each with its whole-range aggregates and its first {entries} entries, from
 * one read of their entries (aggregating and listing them in two queries read the same granules
 * twice: 44 against 24 ms at 5 M rows). groupArraySorted keeps only those first entries, oldest
 * first by (timestamp, id), with text previews: sorting a whole session's entries held each of them
 * in memory, prompts included. prefer_column_name_to_alias: inside the tuple, `user_id` and the
 * sums' names mean the entry's columns, not the aggregates' aliases.
 */
export const keyedSessions = defineQuery({
  name: "keyed_sessions",
  params: SessionKeyParams,
  row: SessionRow.extend({ entries: z.array(EntryTuple) }),
  sql: (params) => `WITH ${keyedEntries(params)}
    SELECT session_id, singleton_id, ${SESSION_AGGREGATES},
      arrayMap(entry -> entry.3, groupArraySorted({entries:UInt32})((timestamp, id, ${LIST_TUPLE}))) AS entries
    FROM matching GROUP BY session_id, singleton_id
    SETTINGS prefer_column_name_to_alias = 1`,
  bind: bindSessionKeys,
});

export type KeyedSession = Awaited<ReturnType<typeof keyedSessions.run>>[number];
