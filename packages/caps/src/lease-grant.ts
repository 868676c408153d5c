import { type Amount, amountBeyond } from "./amount";

/** One measure (tokens or nano-USD) of one lease ask, as the leader sees it. */
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
}

/**
 * leaseGrant: how much headroom a lease may cover for one measure. A lease adds `granted - settled`
 * to its counter, and the counter's committed total (settled usage plus every lease's part) stays
 * within the cap: so a lease can grow to `cap - others + settled`. It never shrinks below what the
 * proxy already has (the proxy may be admitting against it while the ask travels). Beyond what is
 * needed now it gets a share of the free headroom, `free / (2 × leases)`: far from the cap a proxy
 * decides many requests on one grant; near it the share tends to 0 and each request asks.
 */
export function leaseGrant(ask: MeasureAsk): { fits: boolean; granted: number } {
  if (ask.cap === undefined) return { fits: true, granted: 0 };
  const others = ask.committedInCounter - ask.contribution;
  const ceiling = ask.cap - others + ask.settled;
  const wanted = ask.proxyCommitted + ask.need;
  const fits = wanted <= Math.max(ask.granted, ceiling);
  if (!fits) return { fits, granted: ask.granted };
  const free = Math.max(0, ceiling - wanted);
  const share = Math.floor(free / (2 * Math.max(1, ask.leases)));
  return { fits, granted: Math.max(ask.granted, Math.min(ceiling, wanted + share)) };
}

/** What a lease adds to its counter: its grant minus what is already settled, never negative. */
export const contributionOf = (granted: Amount, settled: Amount): Amount => amountBeyond(granted, settled);
