import { DEFAULT_ROUTING, type PolicyRouting, RetryBounds, type RoutingStrategy } from "@agentnet/contracts";

/** The routing part of the policy form: the time budget in seconds, as people think of it. */
export interface RoutingDraft {
  strategy: RoutingStrategy;
  /** Weight typed per provider id; a selected provider missing here weighs the default 1. */
  weights: Record<string, number>;
  retries_enabled: boolean;
  max_attempts: number;
  budget_seconds: number;
}

export const DEFAULT_WEIGHT = 1;
const MAX_WEIGHT = 1_000;
const MS_PER_SECOND = 1_000;
export const BUDGET_SECONDS = {
  min: RetryBounds.budgetMs.min / MS_PER_SECOND,
  max: RetryBounds.budgetMs.max / MS_PER_SECOND,
  default: RetryBounds.budgetMs.default / MS_PER_SECOND,
};

export const STRATEGY_LABELS: Record<RoutingStrategy, string> = {
  priority: "Priority (in the order listed)",
  weighted: "Weighted (spread by weight)",
  least_busy: "Least busy (fewest requests in flight)",
};

/** What the form shows for a policy: its routing, or the defaults a policy without one routes by. */
export const routingDraft = (routing: PolicyRouting | undefined): RoutingDraft => {
  const r = routing ?? DEFAULT_ROUTING;
  return {
    strategy: r.strategy,
    weights: { ...r.weights },
    retries_enabled: r.retries_enabled,
    max_attempts: r.max_attempts,
    budget_seconds: r.budget_ms / MS_PER_SECOND,
  };
};

/**
 * The routing to send, or undefined when it is the defaults: a policy that keeps them is stored
 * without `routing`, as one made through the API without it. Weights go only with `weighted`, and
 * only for the providers the policy grants (the API refuses any other).
 */
export function routingBody(draft: RoutingDraft, providerIds: readonly string[]): PolicyRouting | undefined {
  const weights: Record<string, number> = {};
  if (draft.strategy === "weighted") {
    for (const id of providerIds) weights[id] = draft.weights[id] ?? DEFAULT_WEIGHT;
  }
  const routing: PolicyRouting = {
    strategy: draft.strategy,
    weights,
    retries_enabled: draft.retries_enabled,
    max_attempts: draft.max_attempts,
    budget_ms: Math.round(draft.budget_seconds * MS_PER_SECOND),
  };
  const isDefault =
    routing.strategy === DEFAULT_ROUTING.strategy &&
    routing.retries_enabled === DEFAULT_ROUTING.retries_enabled &&
    routing.max_attempts === DEFAULT_ROUTING.max_attempts &&
    routing.budget_ms === DEFAULT_ROUTING.budget_ms;
  return isDefault ? undefined : routing;
}

const wholeIn = (value: number, min: number, max: number, what: string): string | undefined =>
  Number.isInteger(value) && value >= min && value <= max
    ? undefined
    : `must be a whole number of ${what} from ${min} to ${max}`;

/** The API's bounds, checked before submit; keys are the paths the API's details use. */
export function validateRouting(draft: RoutingDraft, providerIds: readonly string[]): Record<string, string> {
  const errors: Record<string, string> = {};
  const put = (path: string, message: string | undefined) => {
    if (message) errors[`routing.${path}`] = message;
  };
  if (draft.strategy === "weighted") {
    for (const id of providerIds) {
      put(`weights.${id}`, wholeIn(draft.weights[id] ?? DEFAULT_WEIGHT, 0, MAX_WEIGHT, "units"));
    }
  }
  const attempts = RetryBounds.maxAttempts;
  put("max_attempts", wholeIn(draft.max_attempts, attempts.min, attempts.max, "attempts"));
  const budget = draft.budget_seconds;
  if (!(budget >= BUDGET_SECONDS.min && budget <= BUDGET_SECONDS.max)) {
    put("budget_ms", `must be from ${BUDGET_SECONDS.min} to ${BUDGET_SECONDS.max} seconds`);
  }
  return errors;
}

/** The policy list's note on routing: empty for the defaults, else what differs (weights in provider order). */
export function routingSummary(routing: PolicyRouting | undefined, providerIds: readonly string[]): string {
  if (!routing) return "";
  const parts: string[] = [];
  if (routing.strategy === "weighted") {
    const weights = providerIds.map((id) => routing.weights[id] ?? DEFAULT_WEIGHT);
    parts.push(providerIds.length > 1 ? `weighted ${weights.join(":")}` : "weighted");
  } else if (routing.strategy === "least_busy") parts.push("least busy");
  if (!routing.retries_enabled) parts.push("no retries");
  return parts.join(", ");
}
