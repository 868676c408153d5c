import { z } from "zod";
import { BudgetRule } from "./budget-rules";
import { Id, Timestamp } from "./common";
import { ConsumptionCounters, ReservedCounter } from "./consumption";
import { Limits } from "./limits";
import { byCaller, endpoint } from "./subjects";

/** Deny reasons of a cap decision, as the access log's deny_reason carries them. */
export const CapDenyReason = z.enum([
  "llm_policy.token_cap_exceeded",
  "llm_policy.budget_cap_exceeded",
  "budget_rule.token_cap_exceeded",
  "budget_rule.budget_cap_exceeded",
]);
export type CapDenyReason = z.infer<typeof CapDenyReason>;

/** The worst case a request may consume: prompt estimate plus max_tokens, priced. */
export const ReservationEstimate = z.object({
  input_tokens: z.number().int().min(0),
  output_tokens: z.number().int().min(0),
  cost_usd: z.number().min(0),
});
export type ReservationEstimate = z.infer<typeof ReservationEstimate>;

/**
 * What a reservation needs of a budget rule. Not its name or timestamps: rules ride along on every
 * capped request, and parsing them showed in the reservation profile.
 */
export const ReserveBudgetRule = BudgetRule.pick({
  id: true,
  enabled: true,
  target_groups: true,
  target_users: true,
  limits: true,
});
export type ReserveBudgetRule = z.infer<typeof ReserveBudgetRule>;

export const ReserveRequest = z.object({
  account_id: Id,
  /** The gateway request id; the request's event carries it back as `id`. */
  request_id: Id,
  user_id: Id,
  /** Every group of the caller (including the account's All group). */
  group_ids: z.array(Id),
  /** The policy that authorised the request. */
  policy: z.object({ id: Id, source_groups: z.array(Id), limits: Limits.optional() }),
  /** The account's enabled budget rules that target this caller; consumption decides again which apply. */
  budget_rules: z.array(ReserveBudgetRule),
  estimate: ReservationEstimate,
});
export type ReserveRequest = z.infer<typeof ReserveRequest>;

export const ReserveReply = z.discriminatedUnion("decision", [
  z.object({
    decision: z.literal("allow"),
    /** Absent when no limit applies: there is nothing to reserve or settle. */
    reservation_id: Id.optional(),
    expires_at: Timestamp.optional(),
    /** The counters holding the estimate; the proxy copies them into the request's event. */
    counters: z.array(ReservedCounter).optional(),
  }),
  z.object({
    decision: z.literal("deny"),
    reason: CapDenyReason,
    /** Which rule fired: the policy id or the budget rule id. */
    limit_source_id: Id,
    dimension_kind: z.enum(["user", "group"]),
    dimension_id: Id,
    /** Seconds until the window that fired starts over; the proxy sends it as Retry-After. */
    retry_after_seconds: z.number().int().min(0),
  }),
]);
export type ReserveReply = z.infer<typeof ReserveReply>;

/** Consumption: counters and cap decisions. */
export const Consumption = {
  reserve: endpoint("agn.consumption.reserve", ReserveRequest, ReserveReply),
  list: endpoint("agn.consumption.list", byCaller({}), ConsumptionCounters),
} as const;
