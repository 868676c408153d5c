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
