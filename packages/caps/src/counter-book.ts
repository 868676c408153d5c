import type {
  GatewayRequestEvent,
  LeaseAsk,
  LeaseGrant,
  LeaseRequest,
  ReservedCounter,
} from "@agentnet/contracts";
import { type Amount, addAmounts, isNoAmount, NO_AMOUNT, quantityOfAmount } from "./amount";
import {
  type Counter,
  committedAmountOf,
  EMPTY_STATE,
  settledAmountOf,
  type UsageDelta,
} from "./counter-state";
import { type CounterKey, chainId, counterKeyOf } from "./counters";
import { askGrant, contributionOf } from "./lease-grant";
import { RecentKeys } from "./recent-keys";
import { actualOf, outcomeOfEvent } from "./settlement";

/**
 * Headroom leased to one proxy on one counter. The proxy admits requests against it in memory;
 * the counter's committed total includes `contribution` = granted - settled (per capped measure),
 * so leases and settled usage together never pass the cap. Settling an event of the lease moves
 * its usage from the lease's part into the counter's settled usage.
 */
interface Lease {
  id: string;
  account_id: string;
  /** `<proxy id>|<counter id>`: a proxy has one lease per counter. */
  owner: string;
  counter: Counter;
  /** `chainId(counter)`, kept: settling resolves an event's counter through its lease without building it. */
  counterId: string;
  granted: Amount;
  settled: Amount;
  contribution: Amount;
  expiresAt: number;
}

/** Usage a batch's events move out of a lease once they are settled. */
interface LeaseCharge extends Amount {
  lease: Lease;
}

/**
 * What a batch of events changes: the usage to persist before anything is applied, the lease
 * charges it ends, and the event ids that make a redelivery a no-op.
 */
export interface Settlement {
  eventIds: string[];
  deltas: UsageDelta[];
  charges: LeaseCharge[];
}

const NO_USAGE = { tokens_input: 0, tokens_output: 0, cost_nanos: 0, tool_calls: 0, requests: 0 };

/**
 * The counters of the accounts the consumption leader decides for, with the headroom leased on
 * them. Every grant is synchronous on one thread, so check-and-grant is atomic without a database
 * round trip (replicas never decide side by side: one leader holds the book, see
 * apps/consumption/src/app.ts). Real usage only enters through `commit`, after the caller persisted
 * it; leases live in memory only.
 */
export class CounterBook {
  private readonly counters = new Map<string, Counter>();
  private readonly accounts = new Map<string, Set<string>>();
  private readonly leases = new Map<string, Lease>();
  private readonly leasesByOwner = new Map<string, Lease>();
  /** Live leases per counter id: how many proxies share its free headroom. */
  private readonly leaseCounts = new Map<string, number>();
  /** Settled event ids, for the redelivery horizon: a redelivery within it counts nothing. */
  private readonly seen: RecentKeys;
  private readonly dirty = new Set<string>();
  /**
   * Counters on which an ask was refused while other leases held part of the headroom, and until
   * when (a lease TTL): grants there carry no share (`leaseGrant`).
   */
  private readonly contended = new Map<string, number>();
  /** Contended counters the proxies have not been told of yet (`takeReclaims`). */
  private readonly reclaims = new Set<string>();

  constructor(
    private readonly newId: () => string,
    redeliveryHorizonMs: number,
  ) {
    this.seen = new RecentKeys(redeliveryHorizonMs);
  }

  /**
   * grantLeases: all or nothing. When every ask's `committed + need` fits (in its lease, or in the
   * counter's headroom), each lease grows to it plus a share of the free headroom (`leaseGrant`)
   * and lives `ttlMs` more; otherwise nothing changes and the refused asks say so.
   */
  grantLeases(request: LeaseRequest, now: number, ttlMs: number): LeaseGrant[] {
    const planned = request.asks.map((ask) => this.plan(request, ask, now));
    if (planned.every((plan) => plan.fits)) {
      for (const plan of planned) this.apply(request, plan, now + ttlMs);
    } else {
      for (const plan of planned) {
        const others = (this.leaseCounts.get(plan.id) ?? 0) - (plan.lease ? 1 : 0);
        if (plan.fits || others === 0) continue;
        this.contended.set(plan.id, now + ttlMs);
        this.reclaims.add(plan.id);
      }
    }
    return planned.map((plan) => {
      const lease = plan.fits ? plan.applied : plan.lease;
      return {
        ...(lease ? { lease_id: lease.id } : {}),
        granted: quantityOfAmount(lease?.granted ?? NO_AMOUNT),
        fits: plan.fits,
        used: quantityOfAmount(settledAmountOf(plan.counter)),
      };
    });
  }

  /**
   * What settling `events` would change, without changing anything: denied and failed requests
   * count nothing; everything else adds its real usage to the counters it names, and moves it out
   * of the lease that admitted it. Events seen before, or repeated in the batch, are skipped.
   * Runs for every capped event: a counter named with its lease is found through the lease, and a
   * batch charges each lease once (building counter ids and a charge per event was a third of what
   * settling a capped event cost, `bench:consumption`).
   */
  prepare(events: GatewayRequestEvent[], now: number): Settlement {
    const settlement: Settlement = { eventIds: [], deltas: [], charges: [] };
    const deltas = new Map<string, UsageDelta>();
    const charges = new Map<Lease, LeaseCharge>();
    const batch = new Set<string>();
    for (const event of events) {
      const counters = event.reserved_counters;
      if (!counters || counters.length === 0 || batch.has(event.id) || this.seen.has(event.id, now)) continue;
      batch.add(event.id);
      settlement.eventIds.push(event.id);
      if (outcomeOfEvent(event) === "released") continue;
      const actual = actualOf(event);
      for (const reserved of counters) {
        const lease = this.leaseOfCounter(event.account_id, reserved);
        const id = lease ? lease.counterId : chainId(counterKeyOf(event.account_id, reserved));
        let delta = deltas.get(id);
        if (!delta) {
          delta = { key: counterKeyOf(event.account_id, reserved), ...NO_USAGE, at: now };
          deltas.set(id, delta);
        }
        delta.tokens_input += actual.tokens_input;
        delta.tokens_output += actual.tokens_output;
        delta.cost_nanos += actual.cost_nanos;
        delta.tool_calls += actual.tool_calls;
        delta.requests += 1;
        if (!lease) continue;
        let charge = charges.get(lease);
        if (!charge) {
          charge = { lease, tokens: 0, costNanos: 0, calls: 0 };
          charges.set(lease, charge);
        }
        charge.tokens += actual.tokens_input + actual.tokens_output;
        charge.costNanos += actual.cost_nanos;
        charge.calls += actual.tool_calls;
      }
    }
    settlement.deltas = [...deltas.values()];
    settlement.charges = [...charges.values()];
    return settlement;
  }

  /** Applies a prepared settlement once its usage is persisted. */
  commit(settlement: Settlement, now: number) {
    for (const delta of settlement.deltas) this.addUsage(delta);
    for (const charge of settlement.charges) {
      const { lease } = charge;
      if (this.leases.get(lease.id) !== lease) continue;
      lease.settled = addAmounts(lease.settled, charge);
      this.setContribution(lease, contributionOf(lease.granted, lease.settled));
    }
    for (const id of settlement.eventIds) this.seen.add(id, now);
  }

  /** Adds persisted usage (a settlement, or a snapshot and journal replayed at start). */
  addUsage(delta: UsageDelta) {
    const counter = this.counterOf(delta.key, delta.at);
    counter.committed_tokens += delta.tokens_input + delta.tokens_output;
    counter.committed_cost_nanos += delta.cost_nanos;
    counter.committed_calls += delta.tool_calls;
    counter.tokens_input += delta.tokens_input;
    counter.tokens_output += delta.tokens_output;
    counter.cost_nanos += delta.cost_nanos;
    counter.tool_calls += delta.tool_calls;
    counter.settled_requests += delta.requests;
    counter.updated_at = Math.max(counter.updated_at, delta.at);
    this.dirty.add(chainId(delta.key));
  }

  /** Marks event ids as settled (replayed from the journal at start). */
  remember(eventIds: Iterable<string>, at: number) {
    for (const id of eventIds) this.seen.add(id, at);
  }

  /** Ends every lease past its expiry (its proxy stopped renewing it: gone, or cut off); returns how many. */
  expire(now: number): number {
    let expired = 0;
    for (const lease of this.leases.values()) {
      if (lease.expiresAt > now) continue;
      this.endLease(lease);
      expired++;
    }
    return expired;
  }

  /**
   * Keeps every lease until `until` at least: the bus is gone, and proxies cut off with it keep
   * admitting on their leases that long (a renewal after the outage sets the usual expiry again).
   */
  holdLeasesUntil(until: number) {
    for (const lease of this.leases.values()) lease.expiresAt = Math.max(lease.expiresAt, until);
  }

  /** Forgets settled event ids past the redelivery horizon. */
  forget(now: number) {
    this.seen.forget(now);
    for (const [id, until] of this.contended) if (until <= now) this.contended.delete(id);
  }

  /**
   * reclaims: the counters on which an ask was refused since the last call while other proxies'
   * leases held part of the headroom. Their proxies are to give back what they hold there and have
   * not committed (a shrink), so that the refused proxy, asking again, finds the room the cap has.
   */
  takeReclaims(): string[] {
    const ids = [...this.reclaims];
    this.reclaims.clear();
    return ids;
  }

  counter(key: CounterKey): Counter | undefined {
    return this.counters.get(chainId(key));
  }

  /** The account's counters with settled usage, newest window first. */
  list(accountId: string, visible: (counter: Counter) => boolean = () => true): Counter[] {
    const ids = this.accounts.get(accountId) ?? new Set();
    return [...ids]
      .map((id) => this.counters.get(id))
      .filter((c): c is Counter => c !== undefined && c.settled_requests > 0 && visible(c))
      .sort((a, b) => b.window_start - a.window_start || chainId(a).localeCompare(chainId(b)));
  }

  /** Counters whose usage changed since the last call, copied, for a snapshot. */
  takeDirty(): Counter[] {
    const changed = [...this.dirty].flatMap((id) => {
      const counter = this.counters.get(id);
      return counter ? [{ ...counter }] : [];
    });
    this.dirty.clear();
    return changed;
  }

  /** Puts counters back on the dirty list after a snapshot that failed. */
  markDirty(counters: CounterKey[]) {
    for (const key of counters) this.dirty.add(chainId(key));
  }

  /** Drops counters whose window ended before `endedBefore` (epoch seconds). */
  pruneEnded(endedBefore: number) {
    for (const [id, counter] of this.counters) {
      if (counter.window_start + counter.window_seconds < endedBefore) this.dropCounter(id, counter);
    }
  }

  dropAccount(accountId: string) {
    for (const lease of this.leases.values()) if (lease.account_id === accountId) this.endLease(lease);
    for (const id of this.accounts.get(accountId) ?? []) {
      const counter = this.counters.get(id);
      if (counter) this.dropCounter(id, counter);
    }
  }

  /** The live lease an event's counter names, if it is a lease of that very counter of the account. */
  private leaseOfCounter(accountId: string, reserved: ReservedCounter): Lease | undefined {
    if (reserved.lease_id === undefined) return undefined;
    const lease = this.leases.get(reserved.lease_id);
    if (!lease || lease.account_id !== accountId) return undefined;
    const { counter } = lease;
    return counter.dimension_kind === reserved.dimension_kind &&
      counter.dimension_id === reserved.dimension_id &&
      counter.window_seconds === reserved.window_seconds &&
      counter.window_start === reserved.window_start
      ? lease
      : undefined;
  }

  private plan(request: LeaseRequest, ask: LeaseAsk, now: number) {
    const key = counterKeyOf(request.account_id, ask.counter);
    const id = chainId(key);
    const counter = this.counters.get(id) ?? { ...key, ...EMPTY_STATE, updated_at: now };
    const owner = `${request.proxy_id}|${id}`;
    const held = this.leasesByOwner.get(owner);
    // A lease the proxy no longer names (it expired here, or another leader granted it) starts over.
    const lease = held && held.id === ask.counter.lease_id ? held : undefined;
    const leases = (this.leaseCounts.get(id) ?? 0) + (lease ? 0 : 1);
    const contended = (this.contended.get(id) ?? 0) > now;
    const { fits, granted } = askGrant(ask, committedAmountOf(counter), lease, leases, contended);
    const shrink = ask.shrink === true;
    return {
      key,
      id,
      owner,
      counter,
      lease,
      held,
      granted,
      shrink,
      fits,
      applied: undefined as Lease | undefined,
    };
  }

  private apply(request: LeaseRequest, plan: ReturnType<CounterBook["plan"]>, expiresAt: number) {
    if (plan.held && plan.held !== plan.lease) this.endLease(plan.held);
    let lease = plan.lease;
    if (!lease) {
      if (plan.shrink || isNoAmount(plan.granted)) return;
      lease = {
        id: this.newId(),
        account_id: request.account_id,
        owner: plan.owner,
        counter: this.counterOf(plan.key, expiresAt, plan.id),
        counterId: plan.id,
        granted: NO_AMOUNT,
        settled: NO_AMOUNT,
        contribution: NO_AMOUNT,
        expiresAt,
      };
      this.leases.set(lease.id, lease);
      this.leasesByOwner.set(lease.owner, lease);
      this.leaseCounts.set(plan.id, (this.leaseCounts.get(plan.id) ?? 0) + 1);
    }
    lease.granted = plan.granted;
    lease.expiresAt = expiresAt;
    const contribution = contributionOf(lease.granted, lease.settled);
    this.setContribution(lease, contribution);
    plan.applied = lease;
    // A shrunk lease with nothing left unsettled adds nothing: it can go now.
    if (plan.shrink && isNoAmount(contribution)) {
      this.endLease(lease);
    }
  }

  private setContribution(lease: Lease, contribution: Amount) {
    lease.counter.committed_tokens += contribution.tokens - lease.contribution.tokens;
    lease.counter.committed_cost_nanos += contribution.costNanos - lease.contribution.costNanos;
    lease.counter.committed_calls += contribution.calls - lease.contribution.calls;
    lease.contribution = contribution;
  }

  private endLease(lease: Lease) {
    if (this.leases.get(lease.id) !== lease) return;
    this.setContribution(lease, NO_AMOUNT);
    this.leases.delete(lease.id);
    if (this.leasesByOwner.get(lease.owner) === lease) this.leasesByOwner.delete(lease.owner);
    const id = lease.counterId;
    const count = (this.leaseCounts.get(id) ?? 1) - 1;
    if (count > 0) this.leaseCounts.set(id, count);
    else this.leaseCounts.delete(id);
  }

  private dropCounter(id: string, counter: Counter) {
    this.counters.delete(id);
    this.dirty.delete(id);
    const ids = this.accounts.get(counter.account_id);
    ids?.delete(id);
    if (ids?.size === 0) this.accounts.delete(counter.account_id);
  }

  private counterOf(key: CounterKey, now: number, id = chainId(key)): Counter {
    let counter = this.counters.get(id);
    if (!counter) {
      counter = { ...key, ...EMPTY_STATE, updated_at: now };
      this.counters.set(id, counter);
      const ids = this.accounts.get(key.account_id) ?? new Set<string>();
      ids.add(id);
      this.accounts.set(key.account_id, ids);
    }
    return counter;
  }
}
