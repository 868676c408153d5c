import type { LeaseAsk } from "@agentnet/contracts";
import { type Amount, type AmountMeasure, amountBeyond } from "./amount";

/** One measure (tokens, nano-USD or tool calls) of one lease ask, as the leader sees it. */
export interface MeasureAsk {
  /** The counter's cap for this measure; undefined = uncapped (nothing to lease). */
  cap: number | undefined;
  /** Settled usage plus every lease's unsettled part, this lease's own included. */
  committedInCounter: number;
  /** This lease: its grant, what of it is already settled, and what it adds to the counter. */
  granted: number;
  settled: number;
  contribution: number;
  /** What the proxy has spent and holds against this lease, and what it must add now. */
  proxyCommitted: number;
  need: number;
  /** Live leases on the counter, this one included. */
  leases: number;
  /** An ask on the counter was refused lately while other leases held part of its headroom. */
  contended?: boolean;
}

/**
 * leaseGrant: how much headroom a lease may cover for one measure. A lease adds `granted - settled`
 * to its counter, and the counter's committed total (settled usage plus every lease's part) stays
 * within the cap: so a lease can grow to `cap - others + settled`. It never shrinks below what the
 * proxy already has (the proxy may be admitting against it while the ask travels). Beyond what is
 * needed now it gets a share of the free headroom, `free / (2 × leases)`: far from the cap a proxy
 * decides many requests on one grant; near it the share tends to 0 and each request asks. On a
 * contended counter (a proxy was refused lately while others' leases held headroom: shares parked
 * at other proxies turned a request away while the cap had room) a lease gets what it needs and no
 * share, so that what is left stays with the leader for whoever asks next.
 */
export function leaseGrant(ask: MeasureAsk): { fits: boolean; granted: number } {
  if (ask.cap === undefined) return { fits: true, granted: 0 };
  const others = ask.committedInCounter - ask.contribution;
  const ceiling = ask.cap - others + ask.settled;
  const wanted = ask.proxyCommitted + ask.need;
  const fits = wanted <= Math.max(ask.granted, ceiling);
  if (!fits) return { fits, granted: ask.granted };
  const free = Math.max(0, ceiling - wanted);
  const share = ask.contended ? 0 : Math.floor(free / (2 * Math.max(1, ask.leases)));
  return { fits, granted: Math.max(ask.granted, Math.min(ceiling, wanted + share)) };
}

/** What a lease adds to its counter: its grant minus what is already settled, never negative. */
export const contributionOf = (granted: Amount, settled: Amount): Amount => amountBeyond(granted, settled);

/** What the leader keeps of a lease: its grant, what of it is settled, and what it adds to its counter. */
export interface LeaseShares {
  granted: Amount;
  settled: Amount;
  contribution: Amount;
}

/**
 * askGrant: the grant for one ask, `leaseGrant` on each measure. `lease` is the one the ask names,
 * undefined when it starts a new lease: a new lease starts from nothing, and the proxy then admits
 * against it alone. A shrink keeps what the proxy says it committed (on the capped measures) and
 * always fits: the proxy stopped admitting beyond it before asking.
 */
export function askGrant(
  ask: LeaseAsk,
  committedInCounter: Amount,
  lease: LeaseShares | undefined,
  leases: number,
  contended = false,
): { fits: boolean; granted: Amount } {
  if (ask.shrink === true) {
    return {
      fits: true,
      granted: {
        tokens: ask.cap_tokens === undefined ? 0 : ask.committed.tokens,
        costNanos: ask.cap_cost_nanos === undefined ? 0 : ask.committed.cost_nanos,
        calls: ask.cap_calls === undefined ? 0 : ask.committed.calls,
      },
    };
  }
  const measure = (name: AmountMeasure, cap: number | undefined, committed: number, need: number) =>
    leaseGrant({
      cap,
      committedInCounter: committedInCounter[name],
      granted: lease ? lease.granted[name] : 0,
      settled: lease ? lease.settled[name] : 0,
      contribution: lease ? lease.contribution[name] : 0,
      proxyCommitted: lease ? committed : 0,
      need,
      leases,
      contended,
    });
  const tokens = measure("tokens", ask.cap_tokens, ask.committed.tokens, ask.need.tokens);
  const cost = measure("costNanos", ask.cap_cost_nanos, ask.committed.cost_nanos, ask.need.cost_nanos);
  const calls = measure("calls", ask.cap_calls, ask.committed.calls, ask.need.calls);
  return {
    fits: tokens.fits && cost.fits && calls.fits,
    granted: { tokens: tokens.granted, costNanos: cost.granted, calls: calls.granted },
  };
}
