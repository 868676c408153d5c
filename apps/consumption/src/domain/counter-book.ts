import {
  AppError,
  type GatewayRequestEvent,
  type ReservedCounter,
  type ReserveReply,
} from "@agentnet/contracts";
import { type CapCheck, denyReason } from "./limits";
import { RecentKeys } from "./recent-keys";
import {
  type Amount,
  type CounterKey,
  type CounterPlan,
  type CounterState,
  chainId,
  EMPTY_STATE,
  firingCheck,
  fitsUnderCap,
  planReservation,
} from "./reservation";
import { type Actual, actualOf, outcomeOfEvent } from "./settlement";
import { retryAfterSeconds } from "./windows";

/** A counter in memory: its key, what it holds, and when usage last changed it (ms). */
export interface Counter extends CounterKey, CounterState {
  updated_at: number;
}

/** Real usage added to one counter: the unit settlement journals and snapshots persist. */
export interface UsageDelta {
  key: CounterKey;
  tokens_input: number;
  tokens_output: number;
  cost_nanos: number;
  requests: number;
  at: number;
}

/** A reservation's estimate held on its counters until an event settles it or it expires. */
interface Hold {
  id: string;
  account_id: string;
  requestKey: string;
  /** The book's own counter objects: ending the hold needs no lookup. */
  counters: Counter[];
  amount: Amount;
  expiresAt: number;
}

export interface ReserveInput {
  account_id: string;
  request_id: string;
  user_id: string;
  checks: CapCheck[];
  amount: Amount;
}

/**
 * What a batch of events changes: the usage to persist before anything is applied, the holds it
 * ends, and the event ids that make a redelivery a no-op.
 */
export interface Settlement {
  eventIds: string[];
  deltas: UsageDelta[];
  endedHolds: string[];
}

const keyOf = (accountId: string, counter: ReservedCounter): CounterKey => ({
  account_id: accountId,
  ...counter,
});

const NO_USAGE = { tokens_input: 0, tokens_output: 0, cost_nanos: 0, requests: 0 };

const reservedCounterOf = ({ dimension_kind, dimension_id, window_seconds, window_start }: CounterKey) => ({
  dimension_kind,
  dimension_id,
  window_seconds,
  window_start,
});

/**
 * The counters of the accounts this replica decides for, with the estimates held on them. Every
 * decision is synchronous on one thread, so check-and-hold is atomic without a database round trip
 * (replicas never decide side by side: one leader holds the book, see app.ts). Real usage only
 * enters through `commit`, after the caller persisted it; holds live in memory only.
 */
export class CounterBook {
  private readonly counters = new Map<string, Counter>();
  private readonly accounts = new Map<string, Set<string>>();
  private readonly holds = new Map<string, Hold>();
  private readonly holdsByRequest = new Map<string, string>();
  /**
   * Requests whose reservation already ended, for `retryWindowMs`: a retried reserve (the proxy
   * retries after a timeout, within seconds) must not hold again. Bounded, not the reservation
   * TTL: at 2,000 requests/s ten minutes of request keys would be over a million entries.
   */
  private readonly decided: RecentKeys;
  /** Settled event ids, for the same window: a redelivery within it counts nothing. */
  private readonly seen: RecentKeys;
  private readonly dirty = new Set<string>();

  constructor(
    private readonly newId: () => string,
    private readonly ttlMs: number,
    retryWindowMs: number,
  ) {
    this.decided = new RecentKeys(retryWindowMs);
    this.seen = new RecentKeys(retryWindowMs);
  }

  reserve(input: ReserveInput, now: number): ReserveReply {
    const plans = planReservation(input.account_id, input.checks, now);
    if (plans.length === 0) return { decision: "allow" };
    const requestKey = `${input.account_id}|${input.request_id}`;
    const retried = this.holds.get(this.holdsByRequest.get(requestKey) ?? "");
    if (retried) return this.allowReply(retried);
    if (this.decided.has(requestKey, now)) {
      throw new AppError(
        409,
        "consumption.request_reserved",
        `request ${input.request_id} was already decided`,
      );
    }
    for (const plan of plans) {
      const state = this.counters.get(plan.id) ?? EMPTY_STATE;
      if (!fitsUnderCap(state, plan, input.amount)) return this.deny(plan, state, input.amount, now);
    }
    const hold: Hold = {
      id: this.newId(),
      account_id: input.account_id,
      requestKey,
      counters: plans.map((plan) => this.counterOf(plan.key, now, plan.id)),
      amount: input.amount,
      expiresAt: now + this.ttlMs,
    };
    for (const counter of hold.counters) {
      counter.committed_tokens += hold.amount.tokens;
      counter.committed_cost_nanos += hold.amount.costNanos;
    }
    this.holds.set(hold.id, hold);
    this.holdsByRequest.set(requestKey, hold.id);
    return this.allowReply(hold);
  }

  /**
   * What settling `events` would change, without changing anything: denied and failed requests
   * only end their hold; everything else adds its real usage to the hold's counters (or, when the
   * hold is gone — expired, or held by a replica that failed over — to the counters the event
   * carries back). Events seen before, or repeated in the batch, are skipped.
   */
  prepare(events: GatewayRequestEvent[], now: number): Settlement {
    const settlement: Settlement = { eventIds: [], deltas: [], endedHolds: [] };
    // Keyed by the book's counter object where there is one, by the counter's id where there is not.
    const deltas = new Map<Counter | string, UsageDelta>();
    const add = (target: Counter | string, key: CounterKey, actual: Actual) => {
      let delta = deltas.get(target);
      if (!delta) {
        // A copy of the key alone: the delta is journaled, the counter object is not.
        delta = { key: keyOf(key.account_id, reservedCounterOf(key)), ...NO_USAGE, at: now };
        deltas.set(target, delta);
      }
      delta.tokens_input += actual.tokens_input;
      delta.tokens_output += actual.tokens_output;
      delta.cost_nanos += actual.cost_nanos;
      delta.requests += 1;
    };
    const batch = new Set<string>();
    for (const event of events) {
      if (!event.reservation_id || this.seen.has(event.id, now) || batch.has(event.id)) continue;
      batch.add(event.id);
      settlement.eventIds.push(event.id);
      const found = this.holds.get(event.reservation_id);
      const hold = found?.account_id === event.account_id ? found : undefined;
      if (hold) settlement.endedHolds.push(hold.id);
      if (outcomeOfEvent(event) === "released") continue;
      const actual = actualOf(event);
      if (hold) for (const counter of hold.counters) add(counter, counter, actual);
      else {
        for (const reserved of event.reserved_counters ?? []) {
          const key = keyOf(event.account_id, reserved);
          const id = chainId(key);
          add(this.counters.get(id) ?? id, key, actual);
        }
      }
    }
    settlement.deltas = [...deltas.values()];
    return settlement;
  }

  /** Applies a prepared settlement once its usage is persisted. */
  commit(settlement: Settlement, now: number) {
    for (const id of settlement.endedHolds) this.endHold(id, now);
    for (const delta of settlement.deltas) this.addUsage(delta);
    for (const id of settlement.eventIds) this.seen.add(id, now);
  }

  /** Adds persisted usage (a settlement, or a snapshot and journal replayed at start). */
  addUsage(delta: UsageDelta) {
    const counter = this.counterOf(delta.key, delta.at);
    const tokens = delta.tokens_input + delta.tokens_output;
    counter.committed_tokens += tokens;
    counter.committed_cost_nanos += delta.cost_nanos;
    counter.tokens_input += delta.tokens_input;
    counter.tokens_output += delta.tokens_output;
    counter.cost_nanos += delta.cost_nanos;
    counter.settled_requests += delta.requests;
    counter.updated_at = Math.max(counter.updated_at, delta.at);
    this.dirty.add(chainId(delta.key));
  }

  /** Marks event ids as settled (replayed from the journal at start). */
  remember(eventIds: Iterable<string>, at: number) {
    for (const id of eventIds) this.seen.add(id, at);
  }

  /** Frees every hold past its expiry; returns how many. */
  expire(now: number): number {
    let expired = 0;
    for (const hold of this.holds.values()) {
      if (hold.expiresAt > now) continue;
      this.endHold(hold.id, now);
      expired++;
    }
    return expired;
  }

  /** Forgets settled event ids and ended requests past their window. */
  forget(now: number) {
    this.seen.forget(now);
    this.decided.forget(now);
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
    for (const id of this.accounts.get(accountId) ?? []) {
      const counter = this.counters.get(id);
      if (counter) this.dropCounter(id, counter);
    }
    for (const [id, hold] of this.holds) {
      if (hold.account_id !== accountId) continue;
      this.holds.delete(id);
      this.holdsByRequest.delete(hold.requestKey);
    }
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

  private endHold(id: string, now: number) {
    const hold = this.holds.get(id);
    if (!hold) return;
    // A counter pruned or dropped meanwhile is no longer in the book; changing it changes nothing.
    for (const counter of hold.counters) {
      counter.committed_tokens -= hold.amount.tokens;
      counter.committed_cost_nanos -= hold.amount.costNanos;
    }
    this.holds.delete(id);
    this.holdsByRequest.delete(hold.requestKey);
    this.decided.add(hold.requestKey, now);
  }

  private allowReply(hold: Hold): ReserveReply {
    return {
      decision: "allow",
      reservation_id: hold.id,
      expires_at: new Date(hold.expiresAt).toISOString(),
      counters: hold.counters.map(reservedCounterOf),
    };
  }

  private deny(plan: CounterPlan, state: CounterState, amount: Amount, now: number): ReserveReply {
    const check = firingCheck(plan, state, amount) ?? plan.checks[0];
    if (!check) throw new Error("a refused counter always has a check");
    return {
      decision: "deny",
      reason: denyReason(check),
      limit_source_id: check.source_id,
      dimension_kind: check.dimension_kind,
      dimension_id: check.dimension_id,
      retry_after_seconds: retryAfterSeconds(now, plan.key.window_start, plan.key.window_seconds),
    };
  }
}
