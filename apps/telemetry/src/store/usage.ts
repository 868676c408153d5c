import { Granularity } from "@agentnet/contracts";
import { z } from "zod";
import { costNumbers, tokenNumbers } from "./entries";
import { bindUsageFilters, USAGE_WHERE, UsageFilterParams } from "./filters";
import { ChTimestamp, defineQuery } from "./query";

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

/**
 * Token and cost sums per bucket, oldest first; buckets without usage are absent. FINAL counts each
 * request id once, so a redelivered event that still sits in an unmerged part never counts twice;
 * it merges only overlapping parts within a partition, where `LIMIT 1 BY id` hashed every id.
 */
export const usageOverview = defineQuery({
  name: "usage_overview",
  params: UsageFilterParams.extend({ granularity: Granularity }),
  row: UsageBucketRow,
  sql: ({ granularity }) => `
    SELECT ${BUCKET_START[granularity]} AS period_start,
      sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
      sum(total_tokens) AS total_tokens, sum(cached_input_tokens) AS cached_input_tokens,
      sum(cache_creation_tokens) AS cache_creation_tokens,
      sum(cost_usd) AS cost_usd, sum(input_cost_usd) AS input_cost_usd,
      sum(cached_input_cost_usd) AS cached_input_cost_usd,
      sum(cache_creation_cost_usd) AS cache_creation_cost_usd,
      sum(output_cost_usd) AS output_cost_usd, sum(cache_cost_usd) AS cache_cost_usd
    FROM usage_events FINAL WHERE ${USAGE_WHERE}
    GROUP BY period_start
    ORDER BY period_start`,
  bind: bindUsageFilters,
});
