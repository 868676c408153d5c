import type { LeaseAsk, ReservedCounter } from "@agentnet/contracts";
import { type Amount, NO_AMOUNT, quantityOfAmount } from "./amount";
import { type CounterKey, type CounterPlan, chainId, reservedCounterOf } from "./counters";

/**
 * Headroom the consumption leader leased this proxy on one counter. `committed` is what the proxy
 * has spent (finished requests, real usage) and holds (requests in flight) against it; a request
 * is admitted while `committed + amount <= granted` on every capped measure.
 */
export interface LocalLease {
  key: CounterKey;
  /** The counter's caps as the latest request saw them (which measures the lease limits). */
  caps: Pick<CounterPlan, "capTokens" | "capCostNanos" | "capCalls">;
  /** Undefined until the leader granted one. */
  id: string | undefined;
  /** The counter as the events of requests it admits name it (with the lease id): built once per id. */
  counter: ReservedCounter | undefined;
  granted: Amount;
  committed: Amount;
  /** Local clock; counted from when the ask was sent, so it never outlives the leader's record. */
  expiresAt: number;
  /** When the ask the leader last granted it was sent (local clock): what a bus outage counts from. */
  confirmedAt: number;
  /**
   * The TTL of its last grant: it is renewed within half of it. A leader whose store is away grants
   * shorter than its usual TTL, up to the horizon the store has.
   */
  ttlMs: number;
  lastUsedAt: number;
  /** Requests in flight holding on it (admitted, not finished): while any does, it must not lapse. */
  holds: number;
  /**
   * Finished requests whose events have not reached the stream yet (`LeaseTable.untilStored`): their
   * usage is in no counter, so the lease must not lapse either, or the leader would free it.
   */
  unsent: number;
  /** The ask in flight for this lease: asks of one lease go one at a time, in order. */
  asking: Promise<unknown> | undefined;
}

/** A request's share of its leases: what it holds on each, swapped for real usage when it ends. */
export interface Hold {
  leases: LocalLease[];
  amount: Amount;
  /** Every counter the request counts on, capped ones with the lease that admitted it. */
  counters: ReservedCounter[];
}

/** A lease of `plan`'s counter that the leader has not granted yet: nothing fits in it. */
export const ungrantedLease = (plan: CounterPlan, now: number): LocalLease => ({
  key: plan.key,
  caps: { capTokens: plan.capTokens, capCostNanos: plan.capCostNanos, capCalls: plan.capCalls },
  id: undefined,
  counter: undefined,
  granted: NO_AMOUNT,
  committed: NO_AMOUNT,
  expiresAt: 0,
  confirmedAt: 0,
  ttlMs: 0,
  lastUsedAt: now,
  holds: 0,
  unsent: 0,
  asking: undefined,
});

/**
 * The lease a grant under a new id starts (the leader did not know the old one), from nothing
 * committed. Requests in flight keep the old lease object; their events still name it.
 */
export const leaseUnderNewId = (lease: LocalLease, leaseId: string): LocalLease => ({
  ...lease,
  id: leaseId,
  counter: { ...reservedCounterOf(lease.key), lease_id: leaseId },
  committed: NO_AMOUNT,
  holds: 0,
  unsent: 0,
  asking: undefined,
});

/** The ask for `need` beyond what `lease` has committed, naming the lease the leader granted. */
export function leaseAsk(plan: CounterPlan, lease: LocalLease, need: Amount): LeaseAsk {
  const counter = reservedCounterOf(plan.key);
  return {
    counter: lease.id ? { ...counter, lease_id: lease.id } : counter,
    ...(plan.capTokens === undefined ? {} : { cap_tokens: plan.capTokens }),
    ...(plan.capCostNanos === undefined ? {} : { cap_cost_nanos: plan.capCostNanos }),
    ...(plan.capCalls === undefined ? {} : { cap_calls: plan.capCalls }),
    committed: quantityOfAmount(lease.committed),
    need: quantityOfAmount(need),
  };
}

/** The grant as caps on what the lease may commit, for the measures the counter caps. */
export const grantOf = (lease: LocalLease): Pick<CounterPlan, "capTokens" | "capCostNanos" | "capCalls"> => ({
  capTokens: lease.caps.capTokens === undefined ? undefined : lease.granted.tokens,
  capCostNanos: lease.caps.capCostNanos === undefined ? undefined : lease.granted.costNanos,
  capCalls: lease.caps.capCalls === undefined ? undefined : lease.granted.calls,
});

/** Less than a quarter of a capped measure's grant is left. */
export function runningLow(lease: LocalLease): boolean {
  const grant = grantOf(lease);
  return (
    (grant.capTokens !== undefined && grant.capTokens - lease.committed.tokens < grant.capTokens / 4) ||
    (grant.capCostNanos !== undefined &&
      grant.capCostNanos - lease.committed.costNanos < grant.capCostNanos / 4) ||
    (grant.capCalls !== undefined && grant.capCalls - lease.committed.calls < grant.capCalls / 4)
  );
}

/** A plan rebuilt from a lease, for renewals. */
export const planOfLease = (lease: LocalLease): CounterPlan => ({
  key: lease.key,
  id: chainId(lease.key),
  ...lease.caps,
  checks: [],
});

/** The plan of the window after a lease's window, with the lease's caps. */
export function nextWindowPlan(lease: LocalLease): CounterPlan {
  const key = { ...lease.key, window_start: lease.key.window_start + lease.key.window_seconds };
  return { key, id: chainId(key), ...lease.caps, checks: [] };
}
