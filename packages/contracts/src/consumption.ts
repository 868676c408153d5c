import { z } from "zod";
import { Id, Timestamp } from "./common";

/** Whether a counter counts one end user or one source group across all its members. */
export const DimensionKind = z.enum(["user", "group"]);
export type DimensionKind = z.infer<typeof DimensionKind>;

/**
 * A counter a reservation holds its estimate on: one dimension in one epoch-aligned window. The
 * reserve reply names them and the request's event carries them back, so settlement knows which
 * counters to count even when the hold itself is gone (expired, or lost with a failed-over leader).
 */
export const ReservedCounter = z.object({
  dimension_kind: DimensionKind,
  dimension_id: Id,
  window_seconds: z.number().int().min(1),
  /** Epoch seconds. */
  window_start: z.number().int().min(0),
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
  updated_at: Timestamp,
});
export type ConsumptionCounter = z.infer<typeof ConsumptionCounter>;

/** GET consumption: every counter of the account, newest window first. */
export const ConsumptionCounters = z.array(ConsumptionCounter);
export type ConsumptionCounters = z.infer<typeof ConsumptionCounters>;
