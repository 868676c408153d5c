import type { Warehouse } from "@agentnet/clickhouse";
import { z } from "zod";
import { entriesWithin, previewChars } from "../domain/reply-budget";
import { bindLogFilters, EARLIEST, LogFilterParams, logWhere, newestFirstWindows } from "./filters";
import { ChNumber, defineQuery } from "./query";
import { type KeyedSession, keyedSessions, MAX_ENTRIES_PER_SESSION, sessionPage } from "./sessions";

/**
 * Sessions with activity at or after {since}, newest last activity first, and how many there are.
 * Every row at or after {since} belongs to one of them and their last activity lies inside the
 * window, so ended_at is exact; duplicates change neither a max nor the set of keys (no FINAL).
 */
const recentSessions = defineQuery({
  name: "session_recent_keys",
  params: LogFilterParams.extend({
    since: z.date(),
    limit: z.number().int().min(1),
    offset: z.number().int().min(0),
  }),
  row: z.object({ session_id: z.string(), singleton_id: z.string(), active_sessions: ChNumber }),
  sql: (params) => `
    SELECT session_id, singleton_id, max(timestamp) AS ended_at, count() OVER () AS active_sessions
    FROM (
      SELECT session_id, if(session_id = '', id, '') AS singleton_id, timestamp
      FROM access_logs WHERE ${logWhere(params)} AND timestamp >= {since:DateTime64(3)}
    )
    GROUP BY session_id, singleton_id
    ORDER BY ended_at DESC, session_id DESC, singleton_id DESC
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
  bind: (params) => ({
    ...bindLogFilters(params),
    since: params.since,
    limit: params.limit,
    offset: params.offset,
  }),
});

export interface SessionPageParams extends LogFilterParams {
  sort_column: string;
  sort_order: "ascending" | "descending";
  limit: number;
  offset: number;
  /** Bytes the page's sessions may take in its reply (`replyBudget`): bounds the entries read. */
  budget: number;
}

/**
 * A page of sessions, each with its first entries. The default order, last activity newest first,
 * is answered from a time window that grows (`newestFirstWindows`) until it holds
 * `offset + limit` sessions (any session outside it ended earlier than all inside): the work
 * follows the page, not the account's history. Any other order groups every matching entry to
 * sort them. Either way the page's sessions are then aggregated over the whole filter range and
 * listed with their entries in one read (`keyedSessions`): of each session no more entries and text
 * than its share of the budget could carry (`fitSessions` then fits them exactly).
 */
export async function readSessionPage(
  warehouse: Warehouse,
  params: SessionPageParams,
): Promise<KeyedSession[]> {
  if (params.sort_column !== "ended_at" || params.sort_order !== "descending") {
    return keyedSessionsOf(warehouse, params, await sessionPage.run(warehouse, params), EARLIEST);
  }
  for (const { since, last } of newestFirstWindows(params)) {
    const keys = await recentSessions.run(warehouse, { ...params, since });
    const active = keys[0]?.active_sessions ?? 0;
    if (active < params.offset + params.limit && !last) continue;
    return keyedSessionsOf(warehouse, params, keys, since);
  }
  return [];
}

type SessionKey = { session_id: string; singleton_id: string };

/** The given sessions in the given order; their singletons were active at or after `since`. */
async function keyedSessionsOf(
  warehouse: Warehouse,
  params: SessionPageParams,
  keys: SessionKey[],
  since: Date,
): Promise<KeyedSession[]> {
  if (keys.length === 0) return [];
  const share = Math.floor(params.budget / keys.length);
  const entries = entriesWithin(share, MAX_ENTRIES_PER_SESSION);
  const rows = await keyedSessions.run(warehouse, {
    ...params,
    since,
    entries,
    preview_chars: previewChars(share, entries),
    session_ids: keys.filter((k) => k.singleton_id === "").map((k) => k.session_id),
    singleton_ids: keys.filter((k) => k.singleton_id !== "").map((k) => k.singleton_id),
  });
  const byKey = new Map(rows.map((row) => [keyOf(row), row]));
  return keys.flatMap((k) => byKey.get(keyOf(k)) ?? []);
}

export const keyOf = (s: SessionKey) => `${s.session_id}\u0000${s.singleton_id}`;
