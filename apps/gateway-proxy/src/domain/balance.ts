import type { PolicyRouting } from "@agentnet/contracts";
import type { Route } from "./decision";

/**
 * The order a request tries its candidates in (`decide` lists them in priority order):
 * - priority: as listed;
 * - weighted: smooth weighted round robin (nginx's), one rotation per policy on this proxy, then the
 *   others heaviest first; weight 0 keeps a provider out of the rotation but still a fallback, and a
 *   provider without a weight weighs 1;
 * - least_busy: fewest requests in flight on this proxy first, ties in list order.
 * Whatever the strategy, a provider cooling down goes last: tried only when the others failed.
 */
export function attemptOrder(
  routing: PolicyRouting,
  policyId: string,
  candidates: readonly Route[],
  state: RouteState,
): readonly Route[] {
  // One candidate (the common case) is its own order: nothing to allocate or count.
  if (candidates.length === 1) return candidates;
  let ordered: Route[];
  if (routing.strategy === "weighted") ordered = state.rotation.order(policyId, candidates, routing.weights);
  else if (routing.strategy === "least_busy") {
    const busy = candidates.map((route, index) => ({ route, index, load: state.load(route.provider.id) }));
    busy.sort((a, b) => a.load - b.load || a.index - b.index);
    ordered = busy.map((entry) => entry.route);
  } else ordered = [...candidates];
  const cooling = ordered.filter((route) => state.cooling(route.provider.id));
  if (cooling.length === 0 || cooling.length === ordered.length) return ordered;
  return [...ordered.filter((route) => !state.cooling(route.provider.id)), ...cooling];
}

/** What ordering reads of this proxy's routing state. */
export interface RouteState {
  rotation: WeightedRotation;
  /** Requests in flight at the provider on this proxy. */
  load(providerId: string): number;
  /** The provider is cooling down (not when its cooldown is over and it awaits its probe). */
  cooling(providerId: string): boolean;
}

const weightOf = (weights: Record<string, number>, providerId: string) => weights[providerId] ?? 1;

/**
 * Smooth weighted round robin: each pick adds every weight to its provider's credit, picks the
 * highest credit and takes the total off it, so 3:1 goes a, a, b, a and never bunches.
 */
export class WeightedRotation {
  private readonly credits = new Map<string, Map<string, number>>();

  /** The next pick first, then the others heaviest first (weight 0 last), ties in list order. */
  order(policyId: string, candidates: readonly Route[], weights: Record<string, number>): Route[] {
    const picked = this.pick(policyId, candidates, weights);
    const rest = candidates.filter((route) => route !== picked);
    rest.sort((a, b) => weightOf(weights, b.provider.id) - weightOf(weights, a.provider.id));
    return picked ? [picked, ...rest] : rest;
  }

  private pick(policyId: string, candidates: readonly Route[], weights: Record<string, number>) {
    let credits = this.credits.get(policyId);
    if (!credits) {
      credits = new Map();
      this.credits.set(policyId, credits);
    }
    let total = 0;
    let best: Route | undefined;
    let bestCredit = Number.NEGATIVE_INFINITY;
    for (const route of candidates) {
      const weight = weightOf(weights, route.provider.id);
      if (weight <= 0) continue;
      const credit = (credits.get(route.provider.id) ?? 0) + weight;
      credits.set(route.provider.id, credit);
      total += weight;
      if (credit > bestCredit) {
        best = route;
        bestCredit = credit;
      }
    }
    if (best) credits.set(best.provider.id, bestCredit - total);
    return best;
  }
}
