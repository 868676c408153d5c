import { z } from "zod";
import { Id } from "./common";

/**
 * How a policy chooses among the providers it grants for one request (docs/API.md, "Routing"). The
 * spec lets a policy name several destination providers and leaves the choice to the gateway; a
 * policy without `routing` gets `DEFAULT_ROUTING`, so one naming two providers that serve a model
 * fails over from the first to the second by itself.
 *
 * - `priority`: the providers in the policy's order; the next is tried when one fails.
 * - `weighted`: spread over the providers by `weights` (smooth weighted round robin, per proxy);
 *   a failure falls back to the others, heaviest first. A provider without a weight weighs 1.
 * - `least_busy`: the provider with the fewest requests in flight on this proxy, ties in order.
 */
export const RoutingStrategy = z.enum(["priority", "weighted", "least_busy"]);
export type RoutingStrategy = z.infer<typeof RoutingStrategy>;

/** Bounds of a request's retries: every attempt and the wait between them fit in `budget_ms`. */
export const RetryBounds = {
  maxAttempts: { min: 1, max: 5, default: 3 },
  budgetMs: { min: 1_000, max: 600_000, default: 60_000 },
} as const;

export const PolicyRouting = z.object({
  strategy: RoutingStrategy,
  /** Provider id → weight (0 takes it out of the rotation but keeps it as a fallback). */
  weights: z.record(Id, z.number().int().min(0).max(1_000)),
  /** Whether a failure before the answer's first byte is tried again on the next candidate. */
  retries_enabled: z.boolean(),
  /** Attempts per request, the first included (1: no retry). */
  max_attempts: z.number().int().min(RetryBounds.maxAttempts.min).max(RetryBounds.maxAttempts.max),
  /** No new attempt starts once this much time has passed since the request arrived. */
  budget_ms: z.number().int().min(RetryBounds.budgetMs.min).max(RetryBounds.budgetMs.max),
});
export type PolicyRouting = z.infer<typeof PolicyRouting>;

export const DEFAULT_ROUTING: PolicyRouting = {
  strategy: "priority",
  weights: {},
  retries_enabled: true,
  max_attempts: RetryBounds.maxAttempts.default,
  budget_ms: RetryBounds.budgetMs.default,
};

/** POST/PUT body: every field may be left out and takes its default. */
export const PolicyRoutingBody = z.object({
  strategy: RoutingStrategy.default(DEFAULT_ROUTING.strategy),
  weights: PolicyRouting.shape.weights.default({}),
  retries_enabled: z.boolean().default(DEFAULT_ROUTING.retries_enabled),
  max_attempts: PolicyRouting.shape.max_attempts.default(DEFAULT_ROUTING.max_attempts),
  budget_ms: PolicyRouting.shape.budget_ms.default(DEFAULT_ROUTING.budget_ms),
});
export type PolicyRoutingBody = z.infer<typeof PolicyRoutingBody>;

/**
 * One attempt of a request at a provider, as its access-log row lists them: a request answered
 * by its second candidate has two. `status` is the vendor's, 0 when none came (`error` then says
 * why: `connect_failed`, `timeout`, `stream_failed_before_first_byte`, ...).
 */
export const RequestAttempt = z.object({
  provider_id: z.string(),
  provider: z.string(),
  model: z.string(),
  status: z.number().int().min(0),
  error: z.string(),
  duration_ms: z.number().int().min(0),
});
export type RequestAttempt = z.infer<typeof RequestAttempt>;

/** Attempts a row keeps; more are not possible (`RetryBounds.maxAttempts.max`). */
export const MAX_ATTEMPTS_LISTED = RetryBounds.maxAttempts.max;
