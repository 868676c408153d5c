import type {
  GatewayRequestEvent,
  LeaseReply,
  LeaseRequest,
  Quantity,
  ReservedCounter,
} from "@agentnet/contracts";
import {
  type Amount,
  addAmounts,
  amountBeyond,
  amountOfQuantity,
  type CapCheck,
  CounterBook,
  type CounterKey,
  chainId,
  committedAmountOf,
  isNoAmount,
  NO_AMOUNT,
  settledAmountOf,
  subtractAmounts,
} from "./index";
import type { World } from "./simulation";

export const ACCOUNT = "acc_sim";
export const LEASE_TTL_MS = 6_000;
/** AGN_LEASE_OUTAGE_SECONDS scaled down from 75 s with the outages, so that a run stays short. */
export const OUTAGE_GRACE_MS = 30_000;
const REDELIVERY_HORIZON_MS = 120_000;

interface Usage {
  key: CounterKey;
  amount: Amount;
  requests: number;
}

const keyOf = (accountId: string, { lease_id: _, ...counter }: ReservedCounter): CounterKey => ({
  account_id: accountId,
  ...counter,
});
const show = (value: unknown) => JSON.stringify(value);

/**
 * The consumption leader as thin glue around its `CounterBook`, doing what `UsageKeeper` does for
 * the bus handlers (`lease`, `settle`, `sweepExpired`, `busLost`) without the store, and checking
 * after each step what the book must show.
 */
export class SimulatedLeader {
  private readonly book: CounterBook;
  private leaseIds = 0;
  /** The usage of finished requests per counter: what the book must hold once every event settled. */
  private readonly truth = new Map<string, Usage>();
  /** Usage settled on a counter after its lease ended at the leader: no grant covered it. */
  private readonly unleased = new Map<string, Amount>();
  private readonly settledIds = new Set<string>();

  constructor(private readonly world: World) {
    this.book = new CounterBook(() => `lease-${++this.leaseIds}`, REDELIVERY_HORIZON_MS);
  }

  /** `UsageKeeper.lease`: the book grants, synchronously. */
  lease(request: LeaseRequest): LeaseReply {
    const grants = this.book.grantLeases(request, this.world.clock.now, LEASE_TTL_MS);
    request.asks.forEach((ask, i) => {
      const key = keyOf(request.account_id, ask.counter);
      if (grants[i]?.fits === false) {
        this.world.stats.leaderRefusals++;
        this.assertRefusedOnlyWithoutHeadroom(key, ask.need);
      }
      this.assertLeasesWithinCap(key);
    });
    return { grants, ttl_ms: LEASE_TTL_MS };
  }

  /** A request ended with `actual` on `counters`: the book must come to count it once. */
  expect(counters: ReservedCounter[], actual: Amount, failed: boolean) {
    for (const counter of counters) {
      const key = keyOf(ACCOUNT, counter);
      const usage = this.truth.get(chainId(key)) ?? { key, amount: NO_AMOUNT, requests: 0 };
      const requests = usage.requests + (failed ? 0 : 1);
      this.truth.set(chainId(key), { key, amount: addAmounts(usage.amount, actual), requests });
    }
  }

  /** `UsageKeeper.settle` without the journal: one batch of the settlement consumer. */
  settle(events: GatewayRequestEvent[]) {
    const now = this.world.clock.now;
    for (const event of events) {
      if (this.settledIds.has(event.id)) this.world.stats.duplicateSettlements++;
      this.settledIds.add(event.id);
    }
    const keys = [
      ...new Map(
        events
          .flatMap((event) => event.reserved_counters ?? [])
          .map((counter) => {
            const key = keyOf(ACCOUNT, counter);
            return [chainId(key), key];
          }),
      ).values(),
    ];
    const before = keys.map((key) => this.committed(key));
    this.book.commit(this.book.prepare(events, now), now);
    keys.forEach((key, i) => {
      // Settling a lease's usage moves it from the lease's part to settled usage: only usage
      // no live lease covered grows the committed total.
      const after = this.committed(key);
      const outside = subtractAmounts(after, before[i] ?? NO_AMOUNT);
      if (outside.tokens > 0 || outside.costNanos > 0 || outside.calls > 0) {
        this.world.stats.unleasedSettlements++;
        this.unleased.set(chainId(key), addAmounts(this.unleasedOn(key), outside));
      }
      this.assertNeverCountedTwice(key);
      this.assertNoOvershoot(key);
      this.assertLeasesWithinCap(key);
    });
  }

  /** `UsageKeeper.sweepExpired`: leases past their expiry end once the bus has answered since. */
  sweep(busAnswers: Promise<void>) {
    const now = this.world.clock.now;
    this.book.forget(now);
    busAnswers.then(
      () => this.book.expire(now),
      () => undefined,
    );
  }

  /** `UsageKeeper.busLost`: proxies ride out the outage on their leases, so the leader holds them. */
  busLost() {
    this.book.holdLeasesUntil(this.world.clock.now + OUTAGE_GRACE_MS);
  }

  /** countedExactlyOnce: once every event settled, each counter holds each request's usage once. */
  assertCountedExactlyOnce() {
    const listed = new Map(this.book.list(ACCOUNT).map((counter) => [chainId(counter), counter]));
    for (const id of new Set([...this.truth.keys(), ...listed.keys()])) {
      const truth = this.truth.get(id);
      const counter = truth ? this.book.counter(truth.key) : listed.get(id);
      const held = {
        ...(counter ? settledAmountOf(counter) : NO_AMOUNT),
        requests: counter?.settled_requests ?? 0,
      };
      const expected = { ...(truth?.amount ?? NO_AMOUNT), requests: truth?.requests ?? 0 };
      if (show(held) !== show(expected)) {
        this.world.fail(
          "countedExactlyOnce",
          `${id} holds ${show(held)}, the requests used ${show(expected)}`,
        );
      }
    }
  }

  /**
   * noOvershoot: the usage settled on a counter never passes its cap. Requests here hold their
   * worst case (a stream is cut at what it holds), no proxy is cut off alone and no leader fails
   * over: the cases docs/ARCHITECTURE.md bounds otherwise.
   */
  private assertNoOvershoot(key: CounterKey) {
    const passed = this.passed(key, this.settled(key), NO_AMOUNT);
    if (passed) this.world.fail("noOvershoot", `settled ${passed}`);
  }

  /**
   * leasesWithinCap: settled usage plus every lease's unsettled grant stays within the cap, beyond
   * it only by usage that settled after its lease ended (the book counts it; grants never shrink).
   */
  private assertLeasesWithinCap(key: CounterKey) {
    const passed = this.passed(key, this.committed(key), this.unleasedOn(key));
    if (passed) this.world.fail("leasesWithinCap", `committed ${passed}`);
  }

  /**
   * refusedOnlyWithoutHeadroom: the leader refuses `need` only when it passes the cap's free
   * headroom, cap - committed (settled usage and every lease's grant, the asking proxy's included).
   */
  private assertRefusedOnlyWithoutHeadroom(key: CounterKey, need: Quantity) {
    const committed = this.committed(key);
    const wanted = addAmounts(committed, amountOfQuantity(need));
    if (!this.passed(key, wanted, NO_AMOUNT)) {
      this.world.fail(
        "refusedOnlyWithoutHeadroom",
        `${show(need)} on ${chainId(key)}, ${show(committed)} committed`,
      );
    }
  }

  /** neverCountedTwice: at no moment does the book hold more than the finished requests used. */
  private assertNeverCountedTwice(key: CounterKey) {
    const settled = this.settled(key);
    const truth = this.truth.get(chainId(key))?.amount ?? NO_AMOUNT;
    if (!isNoAmount(amountBeyond(settled, truth))) {
      this.world.fail(
        "neverCountedTwice",
        `${chainId(key)} holds ${show(settled)}, the requests used ${show(truth)}`,
      );
    }
  }

  /** Which capped measure of `key` `amount` passes by more than `beyond`, if any. */
  private passed(key: CounterKey, amount: Amount, beyond: Amount): string | undefined {
    const capOf = (measure: CapCheck["measure"]) =>
      this.world.checks.find(
        (check) =>
          check.dimension_kind === key.dimension_kind &&
          check.dimension_id === key.dimension_id &&
          check.measure === measure &&
          check.cap > 0,
      )?.cap;
    const capTokens = capOf("tokens");
    const capCost = capOf("cost");
    const capCalls = capOf("calls");
    const over = (measure: string, value: number, cap: number, allowance: number) =>
      `${value} ${measure} > cap ${cap}${allowance > 0 ? ` + ${allowance} settled after its lease ended` : ""} on ${chainId(key)}`;
    if (capTokens !== undefined && amount.tokens > capTokens + beyond.tokens) {
      return over("tokens", amount.tokens, capTokens, beyond.tokens);
    }
    if (capCost !== undefined && amount.costNanos > capCost + beyond.costNanos) {
      return over("nanos", amount.costNanos, capCost, beyond.costNanos);
    }
    if (capCalls !== undefined && amount.calls > capCalls + beyond.calls) {
      return over("calls", amount.calls, capCalls, beyond.calls);
    }
    return undefined;
  }

  private committed(key: CounterKey): Amount {
    const counter = this.book.counter(key);
    return counter ? committedAmountOf(counter) : NO_AMOUNT;
  }

  private settled(key: CounterKey): Amount {
    const counter = this.book.counter(key);
    return counter ? settledAmountOf(counter) : NO_AMOUNT;
  }

  private unleasedOn(key: CounterKey): Amount {
    return this.unleased.get(chainId(key)) ?? NO_AMOUNT;
  }
}
