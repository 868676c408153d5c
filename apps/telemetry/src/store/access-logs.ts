import type { Warehouse } from "@agentnet/clickhouse";
import { type AccessLogEntryView, AccessLogSortField } from "@agentnet/contracts";
import { z } from "zod";
import { ENTRY_COLUMNS, EntryColumns, LIST_SELECT, ListColumns, toEntry, toListEntry } from "./entries";
import {
  bindLogFilters,
  countedTable,
  EARLIEST,
  LogFilterParams,
  logWhere,
  newestFirstWindows,
  unfiltered,
} from "./filters";
import { ChNumber, defineQuery } from "./query";
import { ROLLED_BINDS, ROLLED_UNTIL } from "./rollup";

const PageParams = LogFilterParams.extend({
  sort_by: AccessLogSortField,
  sort_order: z.enum(["ascending", "descending"]),
  limit: z.number().int().min(1),
  offset: z.number().int().min(0),
  /** Rows of the sorted, not yet deduplicated stream the page is taken from (see below). */
  prefix: z.number().int().min(1),
  /** Only entries at or after this (the newest-first window); EARLIEST for any other order. */
  since: z.date(),
  /** Code points of each captured text the page carries (its preview). */
  preview_chars: z.number().int().min(1),
});

const direction = (order: "ascending" | "descending") => (order === "ascending" ? "ASC" : "DESC");

/**
 * One page of entries, taken from the first `prefix` rows of the sorted stream with each id kept
 * once. A redelivered event that still sits in an unmerged part is the same row again (same sort
 * value, same id), so it is adjacent to its original in ORDER BY (sort, id): deduplicating a
 * prefix gives exactly the first distinct entries. The inner query is a plain top-k that reads in
 * primary-key order for the default timestamp sort and stops early (no FINAL, no LIMIT BY over the
 * whole range, both of which read everything). `readAccessLogPage` widens the prefix when
 * duplicates made it too short.
 */
export const accessLogPage = defineQuery({
  name: "access_log_page",
  params: PageParams,
  row: ListColumns.extend({ prefix_rows: ChNumber }).transform(({ prefix_rows, ...columns }) => ({
    prefix_rows,
    entry: toListEntry(columns),
  })),
  sql: (params) => {
    const order = `{sort:Identifier} ${direction(params.sort_order)}, id ${direction(params.sort_order)}`;
    return `
    SELECT *, count() OVER () AS prefix_rows FROM (
      SELECT ${LIST_SELECT} FROM access_logs WHERE ${logWhere(params)} AND timestamp >= {since:DateTime64(3)}
      ORDER BY ${order}
      LIMIT {prefix:UInt64}
    )
    ORDER BY ${order}
    LIMIT 1 BY id
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}`;
  },
  bind: (params) => ({
    ...bindLogFilters(params),
    sort: params.sort_by,
    limit: params.limit,
    offset: params.offset,
    prefix: params.prefix,
    since: params.since,
    preview_chars: params.preview_chars,
  }),
});

/**
 * Matching entries; FINAL collapses redelivered copies, so each request counts once. Over the whole
 * log, rolled hours are counted in access_log_hourly and only the rest from the entries; a count
 * that names a user reads the user-sorted copy of the filter columns (`countedTable`).
 */
export const accessLogCount = defineQuery({
  name: "access_log_count",
  params: LogFilterParams,
  row: z.object({ total: ChNumber }),
  sql: (params) =>
    unfiltered(params)
      ? `SELECT
          (SELECT sum(entries) FROM access_log_hourly FINAL
           WHERE account_id = {account:String} AND hour < ${ROLLED_UNTIL})
          + (SELECT count() FROM access_logs FINAL
             WHERE account_id = {account:String} AND timestamp >= ${ROLLED_UNTIL}) AS total`
      : `SELECT count() AS total FROM ${countedTable(params)} FINAL WHERE ${logWhere(params)}`,
  bind: (params) => ({ ...bindLogFilters(params), ...(unfiltered(params) ? ROLLED_BINDS : {}) }),
});

/** Duplicates are rare (a redelivery before the merge), so twice the rows a page needs is slack. */
const PREFIX_FACTOR = 2;
/** Each retry reads this many times more; past the cap a short page is what there is. */
const PREFIX_GROWTH = 4;
const MAX_PREFIX = 2 ** 32;

type PageInput = Omit<z.input<typeof PageParams>, "prefix" | "since">;

/**
 * The page. Newest first (the default), it is read from time windows that grow until the page
 * is whole (`newestFirstWindows`); other orders read the whole range. Within a window, a short
 * result whose prefix was full means duplicates crowded it, so the prefix is widened until the
 * page is whole, the prefix holds every matching row, or the page is past `total` (awaited only
 * then, so the count runs alongside the first try).
 */
export async function readAccessLogPage(
  warehouse: Warehouse,
  params: PageInput,
  total: Promise<number>,
): Promise<AccessLogEntryView[]> {
  const newestFirst = params.sort_by === "timestamp" && params.sort_order === "descending";
  const windows = newestFirst ? newestFirstWindows(params) : [{ since: EARLIEST, last: true }];
  let prefix = (params.offset + params.limit) * PREFIX_FACTOR;
  let entries: AccessLogEntryView[] = [];
  for (const { since, last } of windows) {
    for (;;) {
      const rows = await accessLogPage.run(warehouse, { ...params, prefix, since });
      entries = rows.map((row) => row.entry);
      if (rows.length >= params.limit || prefix >= MAX_PREFIX) return entries;
      const prefixFull =
        rows.length > 0 ? rows[0]?.prefix_rows === prefix : last && params.offset < (await total);
      if (!prefixFull) break;
      prefix *= PREFIX_GROWTH;
    }
    if (last) return entries;
  }
  return entries;
}

/**
 * One entry by id with its texts whole, within the filters (the account, and the caller's own
 * user when scoped). LIMIT 1: a redelivered copy still in an unmerged part is the same entry.
 */
export const accessLogEntry = defineQuery({
  name: "access_log_entry",
  params: LogFilterParams.extend({ id: z.string().min(1) }),
  row: EntryColumns.transform(toEntry),
  sql: (params) =>
    `SELECT ${ENTRY_COLUMNS} FROM access_logs WHERE ${logWhere(params)} AND id = {id:String} LIMIT 1`,
  bind: (params) => ({ ...bindLogFilters(params), id: params.id }),
});
