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
  namesDimension,
  UsageFilterParams,
  usageWhere,
} from "./filters";
import { ChTimestamp, defineQuery } from "./query";
import { readRollupProgress } from "./rollup";

/**
 * Bucket start per granularity, in UTC (the warehouse pins session_timezone). Weeks start on
 * Monday (ISO 8601), months on the 1st. Each is a DateTime so every bucket renders alike, whether
 * it is cut from an event's timestamp or a rolled hour.
 */
export const BUCKET_START: Record<Granularity, (column: string) => string> = {
  minute: (column) => `toStartOfMinute(${column})`,
  hour: (column) => `toStartOfHour(${column})`,
  day: (column) => `toStartOfDay(${column})`,
  week: (column) => `toDateTime(toMonday(${column}), 'UTC')`,
  month: (column) => `toDateTime(toStartOfMonth(${column}), 'UTC')`,
};

export const UsageBucketRow = z.object({
  period_start: ChTimestamp,
  ...tokenNumbers,
  ...costNumbers,
});

/** The filters and the whole hours in [rolled_from, rolled_to) read from a rollup; equal bounds: none. */
export const RolledFilterParams = UsageFilterParams.extend({
  rolled_from: z.date(),
  rolled_to: z.date(),
});
export type RolledFilterParams = z.infer<typeof RolledFilterParams>;

const OverviewParams = RolledFilterParams.extend({ granularity: Granularity });

/**
 * The rows a usage read aggregates: the `rolled` select list over the rolled hours and the
 * `events` one over usage_events outside them (all of it when nothing is rolled), both read FINAL
 * and joined by UNION ALL (by position: the lists name the same columns in the same order).
 * `groupBy` groups each side before the union, for aggregates that must be built per side. The
 * rolled hours come from usage_hourly_totals, a row per hour, when the filters name no dimension
 * and the `rolled` list reads none (`byDimension` unset), else from usage_hourly.
 */
export function rolledAndEvents(
  params: RolledFilterParams,
  select: { rolled: string; events: string; groupBy?: string; byDimension?: boolean },
): string {
  const groupBy = select.groupBy === undefined ? "" : `\n  GROUP BY ${select.groupBy}`;
  const events = `SELECT ${select.events} FROM usage_events FINAL WHERE ${usageWhere(params)}`;
  if (params.rolled_from >= params.rolled_to) return `${events}${groupBy}`;
  const rollup =
    select.byDimension === true || namesDimension(params) ? "usage_hourly" : "usage_hourly_totals";
  return `SELECT ${select.rolled} FROM ${rollup} FINAL
    WHERE ${dimensionWhere(params)}
      AND hour >= {rolled_from:DateTime64(3)} AND hour < {rolled_to:DateTime64(3)}${groupBy}
  UNION ALL
  ${events} AND (timestamp < {rolled_from:DateTime64(3)} OR timestamp >= {rolled_to:DateTime64(3)})${groupBy}`;
}

/** The parameters `rolledAndEvents` binds. */
export const bindRolledAndEvents = (params: RolledFilterParams): Record<string, unknown> => ({
  ...bindUsageFilters(params),
  ...bindDimensionFilters(params),
  ...(params.rolled_from < params.rolled_to
    ? { rolled_from: params.rolled_from, rolled_to: params.rolled_to }
    : {}),
});

/**
 * Token and cost sums per bucket, oldest first; buckets without usage are absent. Rolled hours come
 * from a rollup (`rolledAndEvents`), the rest (the unrolled tail, partial hours at the range's
 * edges) from usage_events. Both read FINAL: a redelivered event that still sits in an unmerged part counts
 * once, and so does an hour computed more than once.
 */
export const usageOverview = defineQuery({
  name: "usage_overview",
  params: OverviewParams,
  row: UsageBucketRow,
  sql: (params) => `
    SELECT ${BUCKET_START[params.granularity]("timestamp")} AS period_start, ${USAGE_SUMS}
    FROM (${rolledAndEvents(params, {
      rolled: `toDateTime64(hour, 3, 'UTC') AS timestamp, ${USAGE_COLUMNS}`,
      events: `timestamp, ${USAGE_COLUMNS}`,
    })})
    GROUP BY period_start
    ORDER BY period_start`,
  bind: bindRolledAndEvents,
});

const HOUR_MS = 3_600_000;

/**
 * The whole hours inside the filters' range that usage_hourly serves, unless the read needs what
 * it does not keep: a session filter or minute buckets (then none: equal bounds).
 */
export async function rolledRange(
  warehouse: Warehouse,
  params: Pick<UsageFilterParams, "start_date" | "end_date" | "session_id">,
  granularity?: Granularity,
): Promise<{ rolled_from: Date; rolled_to: Date }> {
  const none = { rolled_from: EARLIEST, rolled_to: EARLIEST };
  if (granularity === "minute" || params.session_id !== undefined) return none;
  const { done } = await readRollupProgress(warehouse);
  const from = Math.ceil(bound(params.start_date, EARLIEST).getTime() / HOUR_MS) * HOUR_MS;
  const to = Math.min(
    done.getTime(),
    Math.floor((bound(params.end_date, LATEST).getTime() + 1) / HOUR_MS) * HOUR_MS,
  );
  return from < to ? { rolled_from: new Date(from), rolled_to: new Date(to) } : none;
}

/** The overview: token and cost sums per bucket, rolled hours from usage_hourly. */
export async function readUsageOverview(
  warehouse: Warehouse,
  params: z.input<typeof UsageFilterParams> & { granularity: Granularity },
) {
  return usageOverview.run(warehouse, {
    ...params,
    ...(await rolledRange(warehouse, params, params.granularity)),
  });
}
