import type { Warehouse } from "@agentnet/clickhouse";
import { Granularity } from "@agentnet/contracts";
import { z } from "zod";
import { costNumbers, tokenNumbers, USAGE_COLUMNS, USAGE_SUMS } from "./entries";
import {
  bindDimensionFilters,
  bindUsageFilters,
  bound,
  dimensionWhere,
  EARLIEST,
  LATEST,
  UsageFilterParams,
  usageWhere,
} from "./filters";
import { ChTimestamp, defineQuery } from "./query";
import { readRollupProgress } from "./rollup";

/**
 * Bucket start per granularity, in UTC (the warehouse pins session_timezone). Weeks start on
 * Monday (ISO 8601), months on the 1st. Each is a DateTime so every bucket renders alike.
 */
const BUCKET_START: Record<Granularity, string> = {
  minute: "toStartOfMinute(timestamp)",
  hour: "toStartOfHour(timestamp)",
  day: "toStartOfDay(timestamp)",
  week: "toDateTime(toMonday(timestamp), 'UTC')",
  month: "toDateTime(toStartOfMonth(timestamp), 'UTC')",
};

export const UsageBucketRow = z.object({
  period_start: ChTimestamp,
  ...tokenNumbers,
  ...costNumbers,
});

const OverviewParams = UsageFilterParams.extend({
  granularity: Granularity,
  /** Whole hours in [rolled_from, rolled_to) are read from usage_hourly; equal bounds: none. */
  rolled_from: z.date(),
  rolled_to: z.date(),
});

/**
 * Token and cost sums per bucket, oldest first; buckets without usage are absent. Rolled hours come
 * from usage_hourly, the rest (the unrolled tail, partial hours at the range's edges) from
 * usage_events. Both read FINAL: a redelivered event that still sits in an unmerged part counts
 * once, and so does an hour computed more than once.
 */
export const usageOverview = defineQuery({
  name: "usage_overview",
  params: OverviewParams,
  row: UsageBucketRow,
  sql: (params) => {
    const rolled = params.rolled_from < params.rolled_to;
    const events = `SELECT timestamp, ${USAGE_COLUMNS} FROM usage_events FINAL WHERE ${usageWhere(params)}`;
    const source = rolled
      ? `SELECT toDateTime64(hour, 3, 'UTC') AS timestamp, ${USAGE_COLUMNS} FROM usage_hourly FINAL
          WHERE ${dimensionWhere(params)}
            AND hour >= {rolled_from:DateTime64(3)} AND hour < {rolled_to:DateTime64(3)}
        UNION ALL
        ${events} AND (timestamp < {rolled_from:DateTime64(3)} OR timestamp >= {rolled_to:DateTime64(3)})`
      : events;
    return `
    SELECT ${BUCKET_START[params.granularity]} AS period_start, ${USAGE_SUMS}
    FROM (${source})
    GROUP BY period_start
    ORDER BY period_start`;
  },
  bind: (params) => ({
    ...bindUsageFilters(params),
    ...bindDimensionFilters(params),
    ...(params.rolled_from < params.rolled_to
      ? { rolled_from: params.rolled_from, rolled_to: params.rolled_to }
      : {}),
  }),
});

const HOUR_MS = 3_600_000;

/**
 * The overview. usage_hourly serves the whole hours inside the range that are rolled, unless the
 * read needs what it does not keep: a session filter or minute buckets.
 */
export async function readUsageOverview(
  warehouse: Warehouse,
  params: z.input<typeof UsageFilterParams> & { granularity: Granularity },
) {
  const none = { rolled_from: EARLIEST, rolled_to: EARLIEST };
  if (params.granularity === "minute" || params.session_id !== undefined) {
    return usageOverview.run(warehouse, { ...params, ...none });
  }
  const { done } = await readRollupProgress(warehouse);
  const from = Math.ceil(bound(params.start_date, EARLIEST).getTime() / HOUR_MS) * HOUR_MS;
  const to = Math.min(
    done.getTime(),
    Math.floor((bound(params.end_date, LATEST).getTime() + 1) / HOUR_MS) * HOUR_MS,
  );
  const rolled = from < to ? { rolled_from: new Date(from), rolled_to: new Date(to) } : none;
  return usageOverview.run(warehouse, { ...params, ...rolled });
}
