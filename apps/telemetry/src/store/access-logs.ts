import { AccessLogSortField } from "@agentnet/contracts";
import { z } from "zod";
import { ENTRY_COLUMNS, EntryRow } from "./entries";
import { bindLogFilters, LOG_WHERE, LogFilterParams } from "./filters";
import { ChNumber, defineQuery } from "./query";

const PageParams = LogFilterParams.extend({
  sort_by: AccessLogSortField,
  sort_order: z.enum(["ascending", "descending"]),
  limit: z.number().int().min(1),
  offset: z.number().int().min(0),
});

const direction = (order: "ascending" | "descending") => (order === "ascending" ? "ASC" : "DESC");

/**
 * One page of entries. Rows are collapsed by id before paging (`LIMIT 1 BY id`): a redelivered
 * event may still sit in an unmerged part, and a page must not show it twice. The inner query
 * sorts only the sort column and id to find the page's ids; the outer one reads full rows for
 * those ids alone. id breaks ties so pages are stable.
 */
export const accessLogPage = defineQuery({
  name: "access_log_page",
  params: PageParams,
  row: EntryRow,
  sql: ({ sort_order }) => `
    SELECT ${ENTRY_COLUMNS} FROM access_logs
    WHERE ${LOG_WHERE} AND id IN (
      SELECT id FROM access_logs WHERE ${LOG_WHERE}
      ORDER BY {sort:Identifier} ${direction(sort_order)}, id ${direction(sort_order)}
      LIMIT 1 BY id
      LIMIT {limit:UInt32} OFFSET {offset:UInt64}
    )
    ORDER BY {sort:Identifier} ${direction(sort_order)}, id ${direction(sort_order)}
    LIMIT 1 BY id`,
  bind: (params) => ({
    ...bindLogFilters(params),
    sort: params.sort_by,
    limit: params.limit,
    offset: params.offset,
  }),
});

/** Matching entries, each request id counted once. */
export const accessLogCount = defineQuery({
  name: "access_log_count",
  params: LogFilterParams,
  row: z.object({ total: ChNumber }),
  sql: () => `SELECT uniqExact(id) AS total FROM access_logs WHERE ${LOG_WHERE}`,
  bind: bindLogFilters,
});
