import { z } from "zod";
import { costNumbers, ENTRY_COLUMNS, EntryRow, tokenNumbers } from "./entries";
import { bindLogFilters, LOG_WHERE, LogFilterParams } from "./filters";
import { ChNumber, ChTimestamp, defineQuery } from "./query";

/**
 * Matching entries with each request id once (a redelivered event may sit in an unmerged part),
 * plus the session key: a request without a session id is its own singleton session, keyed by
 * its request id (`singleton_id`); a real session has an empty singleton_id.
 */
const MATCHING_ENTRIES = `matching AS (
  SELECT *, if(session_id = '', id, '') AS singleton_id
  FROM (SELECT * FROM access_logs WHERE ${LOG_WHERE} LIMIT 1 BY id)
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
  sql: ({ sort_order }) => {
    const dir = direction(sort_order);
    return `WITH ${MATCHING_ENTRIES}
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

/** Matching sessions (the page unit), singletons included. */
export const sessionCount = defineQuery({
  name: "session_count",
  params: LogFilterParams,
  row: z.object({ total: ChNumber }),
  sql: () => `WITH ${MATCHING_ENTRIES} SELECT uniqExact(session_id, singleton_id) AS total FROM matching`,
  bind: bindLogFilters,
});

/**
 * At most this many entries per session travel in a page: a page is one NATS message (1 MiB by
 * default), and request_count still tells the full size of a longer session.
 */
export const MAX_ENTRIES_PER_SESSION = 100;

/** The matching entries of the given sessions, oldest first, each request once. */
export const sessionEntries = defineQuery({
  name: "session_entries",
  params: LogFilterParams.extend({ session_ids: z.array(z.string()), singleton_ids: z.array(z.string()) }),
  row: z.object({ singleton_id: z.string() }).and(EntryRow),
  sql: () => `WITH ${MATCHING_ENTRIES}
    SELECT singleton_id, ${ENTRY_COLUMNS}
    FROM matching
    WHERE (singleton_id = '' AND has({sessions:Array(String)}, session_id))
       OR (singleton_id != '' AND has({singletons:Array(String)}, singleton_id))
    ORDER BY timestamp ASC, id ASC
    LIMIT ${MAX_ENTRIES_PER_SESSION} BY session_id, singleton_id`,
  bind: (params) => ({
    ...bindLogFilters(params),
    sessions: params.session_ids,
    singletons: params.singleton_ids,
  }),
});
