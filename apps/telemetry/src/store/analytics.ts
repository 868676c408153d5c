import type { Warehouse } from "@agentnet/clickhouse";
import { Granularity, MAX_BREAKDOWN_ROWS, UsageBreakdownDimension } from "@agentnet/contracts";
import { z } from "zod";
import { LATENCY_LEVELS, OUTCOME_SUMS } from "./entries";
import type { UsageFilterParams } from "./filters";
import { ChNumber, ChTimestamp, defineQuery } from "./query";
import { BUCKET_START, bindRolledAndEvents, RolledFilterParams, rolledAndEvents, rolledRange } from "./usage";

/** The token and cost sums a series bucket answers: summed on each side of the union, then together. */
const SERIES_TOTALS = ["input_tokens", "output_tokens", "total_tokens", "cost_usd"];
const sums = (columns: readonly string[]) =>
  columns.map((column) => `sum(${column}) AS ${column}`).join(", ");

/** A quantile estimate as whole milliseconds; NULL when the state saw no allowed request. */
const latencyAt = (index: number) => `if(isNaN(latency[${index}]), NULL, toUInt32(round(latency[${index}])))`;

const SeriesParams = RolledFilterParams.extend({ granularity: Granularity });

export const UsageSeriesRow = z.object({
  period_start: ChTimestamp,
  requests: ChNumber,
  errors: ChNumber,
  denied: ChNumber,
  latency_p50_ms: ChNumber.nullable(),
  latency_p95_ms: ChNumber.nullable(),
  input_tokens: ChNumber,
  output_tokens: ChNumber,
  total_tokens: ChNumber,
  cost_usd: ChNumber,
});

/**
 * Requests, errors, denials, latency quantiles, tokens and cost per bucket, oldest first; buckets
 * without requests are absent. Like the overview, rolled hours come from a rollup (without a
 * dimension filter, usage_hourly_totals: a row per hour) and the rest from usage_events; each side
 * sums its bucket and builds its latency state, and the two are added and merged (t-digest states
 * merge, quantiles would not).
 */
export const usageSeries = defineQuery({
  name: "usage_series",
  params: SeriesParams,
  row: UsageSeriesRow,
  sql: (params) => {
    const bucket = BUCKET_START[params.granularity];
    return `
    SELECT period_start, requests, errors, denied,
      ${latencyAt(1)} AS latency_p50_ms, ${latencyAt(2)} AS latency_p95_ms,
      ${SERIES_TOTALS.join(", ")}
    FROM (
      SELECT period_start, ${sums(["requests", "errors", "denied", ...SERIES_TOTALS])},
        quantilesTDigestMerge(${LATENCY_LEVELS})(latency_ms) AS latency
      FROM (${rolledAndEvents(params, {
        // In OUTCOME_SUMS's order: a UNION ALL matches its columns by position.
        rolled: `${bucket("hour")} AS period_start, ${sums(["requests", "errors", "denied"])},
          quantilesTDigestMergeState(${LATENCY_LEVELS})(latency_ms) AS latency_ms, ${sums(SERIES_TOTALS)}`,
        events: `${bucket("timestamp")} AS period_start, ${OUTCOME_SUMS}, ${sums(SERIES_TOTALS)}`,
        groupBy: "period_start",
      })})
      GROUP BY period_start
    )
    ORDER BY period_start`;
  },
  bind: bindRolledAndEvents,
});

/** The column a breakdown groups by; a request in several groups counts once in each. */
const BREAKDOWN_KEY: Record<UsageBreakdownDimension, string> = {
  user: "user_id",
  group: "arrayJoin(group_ids)",
  model: "model",
  provider: "resolved_provider_id",
};

const BreakdownParams = RolledFilterParams.extend({
  by: UsageBreakdownDimension,
  limit: z.number().int().min(1),
});

export const UsageBreakdownRowColumns = z.object({
  key: z.string(),
  requests: ChNumber,
  total_tokens: ChNumber,
  cost_usd: ChNumber,
});

/**
 * Requests, tokens and cost per user, group, model or provider, the most expensive first (then
 * most tokens, most requests, key), at most `limit` rows. Rolled hours from usage_hourly, which
 * keeps every dimension a breakdown groups by, and the rest from usage_events.
 */
export const usageBreakdown = defineQuery({
  name: "usage_breakdown",
  params: BreakdownParams,
  row: UsageBreakdownRowColumns,
  sql: (params) => {
    const key = BREAKDOWN_KEY[params.by];
    return `
    SELECT key, ${sums(["requests", "total_tokens", "cost_usd"])}
    FROM (${rolledAndEvents(params, {
      rolled: `${key} AS key, requests, total_tokens, cost_usd`,
      events: `${key} AS key, 1 AS requests, total_tokens, cost_usd`,
      byDimension: true,
    })})
    GROUP BY key
    ORDER BY cost_usd DESC, total_tokens DESC, requests DESC, key
    LIMIT {limit:UInt32}`;
  },
  bind: (params) => ({ ...bindRolledAndEvents(params), limit: params.limit }),
});

/** The series of the filters, rolled hours from a rollup (as the overview reads them). */
export async function readUsageSeries(
  warehouse: Warehouse,
  params: z.input<typeof UsageFilterParams> & { granularity: Granularity },
) {
  return usageSeries.run(warehouse, {
    ...params,
    ...(await rolledRange(warehouse, params, params.granularity)),
  });
}

/** The breakdown of the filters: at most MAX_BREAKDOWN_ROWS rows, and whether more matched. */
export async function readUsageBreakdown(
  warehouse: Warehouse,
  params: z.input<typeof UsageFilterParams> & { by: UsageBreakdownDimension },
) {
  const rows = await usageBreakdown.run(warehouse, {
    ...params,
    ...(await rolledRange(warehouse, params)),
    limit: MAX_BREAKDOWN_ROWS + 1,
  });
  return { data: rows.slice(0, MAX_BREAKDOWN_ROWS), truncated: rows.length > MAX_BREAKDOWN_ROWS };
}
