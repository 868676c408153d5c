import { z } from "zod";
import { CostTotals, dateRangeRule, TokenTotals, UsageFilters } from "./access-logs";
import { Timestamp } from "./common";

/** Token and cost aggregates of one time bucket. */
export const UsageBucket = z.object({
  /** Start of the bucket. */
  period_start: Timestamp,
  ...TokenTotals.shape,
  ...CostTotals.shape,
});
export type UsageBucket = z.infer<typeof UsageBucket>;

export const UsageOverview = z.array(UsageBucket);
export type UsageOverview = z.infer<typeof UsageOverview>;

/** Bucket width. Weeks start on Monday (ISO 8601) and months on the 1st, both in UTC. */
export const Granularity = z.enum(["minute", "hour", "day", "week", "month"]);
export type Granularity = z.infer<typeof Granularity>;

export const UsageQuery = z
  .object({
    ...UsageFilters.shape,
    granularity: Granularity.default("day"),
  })
  .superRefine(dateRangeRule);
export type UsageQuery = z.infer<typeof UsageQuery>;

/*
 * Analytics reads, our extension beyond the spec (docs/API.md, "Usage analytics"): the same
 * filters and caller scoping as the usage overview.
 */

const Count = z.number().int().min(0);
/** Milliseconds; null when the bucket holds no allowed request to time. */
const LatencyMs = z.number().int().min(0).nullable();

/** Requests, their outcomes and latency, tokens and cost of one time bucket. */
export const UsageSeriesBucket = z.object({
  /** Start of the bucket. */
  period_start: Timestamp,
  requests: Count,
  /** Requests not denied by the gateway that answered with a status of 400 or above. */
  errors: Count,
  /** Requests the gateway denied (policy, guardrail, cap). */
  denied: Count,
  /** Median and 95th percentile duration of the allowed requests (t-digest estimates). */
  latency_p50_ms: LatencyMs,
  latency_p95_ms: LatencyMs,
  input_tokens: TokenTotals.shape.input_tokens,
  output_tokens: TokenTotals.shape.output_tokens,
  total_tokens: TokenTotals.shape.total_tokens,
  cost_usd: CostTotals.shape.cost_usd,
});
export type UsageSeriesBucket = z.infer<typeof UsageSeriesBucket>;

export const UsageSeries = z.array(UsageSeriesBucket);
export type UsageSeries = z.infer<typeof UsageSeries>;

/** What a breakdown groups by: user id, group id, model, or resolved provider id. */
export const UsageBreakdownDimension = z.enum(["user", "group", "model", "provider"]);
export type UsageBreakdownDimension = z.infer<typeof UsageBreakdownDimension>;

export const UsageBreakdownQuery = z
  .object({
    ...UsageFilters.shape,
    by: UsageBreakdownDimension,
  })
  .superRefine(dateRangeRule);
export type UsageBreakdownQuery = z.infer<typeof UsageBreakdownQuery>;

/** One user, group, model or provider and what its requests used. */
export const UsageBreakdownRow = z.object({
  /** The id or model name; empty for requests without one (denied before a provider was chosen). */
  key: z.string(),
  requests: Count,
  total_tokens: TokenTotals.shape.total_tokens,
  cost_usd: CostTotals.shape.cost_usd,
});
export type UsageBreakdownRow = z.infer<typeof UsageBreakdownRow>;

/** The most rows a breakdown answers. */
export const MAX_BREAKDOWN_ROWS = 100;

/** Rows by cost, most expensive first; `truncated` when more than MAX_BREAKDOWN_ROWS matched. */
export const UsageBreakdown = z.object({
  data: z.array(UsageBreakdownRow).max(MAX_BREAKDOWN_ROWS),
  truncated: z.boolean(),
});
export type UsageBreakdown = z.infer<typeof UsageBreakdown>;
