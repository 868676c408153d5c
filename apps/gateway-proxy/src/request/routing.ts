import { attemptOrder, type RouteState, WeightedRotation } from "../domain/balance";
import { type CooldownOptions, Cooldowns } from "../domain/cooldown";
import type { Decision, Route } from "../domain/decision";

/**
 * This proxy's routing state: the weighted rotations, the requests in flight at each provider
 * (least_busy) and the providers cooling down. Per process, like the upstream pools: proxies
 * balance each their own share of the traffic.
 */
export class ProviderRouting implements RouteState {
  readonly rotation = new WeightedRotation();
  readonly cooldowns: Cooldowns;
  private readonly inFlight = new Map<string, number>();

  constructor(options: CooldownOptions, now: () => number = Date.now) {
    this.cooldowns = new Cooldowns(options, now);
  }

  /** The order an allowed request tries its candidates in. */
  order(decision: Extract<Decision, { decision: "allow" }>): readonly Route[] {
    return attemptOrder(decision.routing, decision.policy.id, decision.candidates, this);
  }

  load(providerId: string): number {
    return this.inFlight.get(providerId) ?? 0;
  }

  cooling(providerId: string): boolean {
    return this.cooldowns.cooling(providerId);
  }

  /** An attempt starts at the provider: it is in flight there (and, past a cooldown, its probe). */
  started(providerId: string): void {
    this.inFlight.set(providerId, this.load(providerId) + 1);
    this.cooldowns.attempting(providerId);
  }

  ended(providerId: string): void {
    const load = this.load(providerId) - 1;
    if (load > 0) this.inFlight.set(providerId, load);
    else this.inFlight.delete(providerId);
  }
}
