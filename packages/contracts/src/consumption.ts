import { z } from "zod";
import { Id, Timestamp } from "./common";

/** Whether a counter counts one end user or one source group across all its members. */
export const DimensionKind = z.enum(["user", "group"]);
export type DimensionKind = z.infer<typeof DimensionKind>;

/**
 * A counter a request counts on: one dimension in one epoch-aligned window. The proxy names them
 * in its lease asks and in the request's event, so settlement counts usage in the windows the
 * request started in.
 */
export const ReservedCounter = z.object({
  dimension_kind: DimensionKind,
  dimension_id: Id,
  window_seconds: z.number().int().min(1),
  /** Epoch seconds. */
  window_start: z.number().int().min(0),
  /**
   * The proxy's lease of headroom on this counter that admitted the request (capped counters only):
   * settling the event moves its usage out of that lease. Optional: uncapped counters have none,
   * and events published before leases lack it.
   */
  lease_id: z.string().min(1).max(64).optional(),
});
export type ReservedCounter = z.infer<typeof ReservedCounter>;

/** Usage of one dimension in one window; windows are aligned to the Unix epoch. */
export const ConsumptionCounter = z.object({
  dimension_kind: DimensionKind,
  dimension_id: z.string(),
  window_seconds: z.number().int().min(1),
  window_start_utc: Timestamp,
  tokens_input: z.number().int().min(0),
  tokens_output: z.number().int().min(0),
  cost_usd: z.number().min(0),
  /** MCP tool calls the servers answered (an agentnet extension; 0 in a counter of model calls only). */
  tool_calls: z.number().int().min(0).default(0),
  updated_at: Timestamp,
});
export type ConsumptionCounter = z.infer<typeof ConsumptionCounter>;

/** GET consumption: every counter of the account, newest window first. */
export const ConsumptionCounters = z.array(ConsumptionCounter);
export type ConsumptionCounters = z.infer<typeof ConsumptionCounters>;
