import type {
  ConsumptionCensusAnswer,
  LeaseAsk,
  LeaseGrant,
  LeaseReply,
  LeaseRequest,
} from "@agentnet/contracts";
import {
  type Amount,
  addAmounts,
  amountBeyond,
  amountOfQuantity,
  isNoAmount,
  NO_AMOUNT,
  subtractAmounts,
} from "./amount";
import { BusWatch } from "./bus-watch";
import { type CounterPlan, chainId, fitsUnderCap, holdsOn, reservedCounterOf } from "./counters";
import {
  grantOf,
  type Hold,
  type LocalLease,
  leaseAsk,
  leaseUnderNewId,
  nextWindowPlan,
  planOfLease,
  runningLow,
  ungrantedLease,
} from "./local-lease";

export type Admission =
  | { kind: "held"; hold: Hold }
  | { kind: "refused"; plan: CounterPlan; used: Amount }
  | { kind: "unavailable" };

export interface LeaseTableOptions {
  proxyId: string;
  clock: () => number;
  /** A lease no request used for this long is shrunk to what it has committed. */
  idleMs: number;
  /**
   * While the bus is lost, a lease stays usable this long after the leader last confirmed it (the
   * leader holds every lease that long when it loses the bus): see docs/ARCHITECTURE.md, "Caps".
   */
  outageGraceMs: number;
  /**
   * Resolves once the bus answers a PING sent now, rejects if the connection drops first (nats.js
   * `flush`). A bus that stops answering is declared lost within seconds (`connectBus`), so this
   * settles soon either way.
   */
  busAnswers: () => Promise<void>;
}

export type AskLeader = (request: LeaseRequest) => Promise<LeaseReply>;

/**
 * How long a request refused while settled usage leaves its cap room waits before each new ask:
 * the room is held by requests in flight or by other proxies' leases, which the leader has just
 * asked to give back what they have not committed (`reclaim`), a round trip away.
 */
export const HELD_RETRY_DELAYS_MS = [50, 150, 300] as const;

/**
 * The proxy's leases of cap headroom, one per counter. Requests are admitted, extended and
 * finished against them in memory; the leader is asked only when a lease lacks room (near a cap,
 * every request), and leases are renewed and shrunk off the request path (`maintain`). See
 * docs/ARCHITECTURE.md, "Caps".
 */
export class LeaseTable {
  private readonly leases = new Map<string, LocalLease>();
  /** Requests waiting on asks to hold on (or grow their hold on) each counter's lease. */
  private readonly waiting = new Map<string, number>();
  /** When a leader last took the census: a grant asked for before is ended (`census`). */
  private censusAt = Number.NEGATIVE_INFINITY;
  /** Leases a census ended while requests held on them: until those end, their usage is unsent. */
  private readonly endedWhileHeld = new Set<LocalLease>();
  private readonly bus: BusWatch;

  constructor(
    private readonly askLeader: AskLeader,
    private readonly options: LeaseTableOptions,
  ) {
    this.bus = new BusWatch(options.busAnswers);
  }

  /**
   * Holds `amount` on every counter of `plans` it adds to a capped measure of (`holdsOn`) when the
   * leases have room for it, without waiting for anything: what nearly every request under a cap
   * far from full does. The other counters are only counted.
   */
  holdFromLeases(plans: CounterPlan[], amount: Amount): Hold | undefined {
    const capped: CounterPlan[] = [];
    const leases: LocalLease[] = [];
    for (const plan of plans) {
      if (!holdsOn(plan, amount)) continue;
      const lease = this.leaseOf(plan);
      if (!this.fits(lease, amount)) return undefined;
      capped.push(plan);
      leases.push(lease);
    }
    return this.hold(plans, capped, leases, amount);
  }

  /** Holds `amount` as `holdFromLeases` does, asking the leader for what the leases lack. */
  async admit(accountId: string, plans: CounterPlan[], amount: Amount): Promise<Admission> {
    const capped = plans.filter((plan) => holdsOn(plan, amount));
    this.startWaiting(capped);
    try {
      // Two asks, each followed by a hold: a grant can be taken before this request holds on it, by
      // a concurrent request of this proxy or by a request that ended beyond what it held.
      for (let asked = 0, retries = 0; ; ) {
        // From the current leases: one replaced meanwhile is a new object.
        const hold = this.holdFromLeases(plans, amount);
        if (hold) return { kind: "held", hold };
        if (asked === 2) return { kind: "refused", plan: capped[0] as CounterPlan, used: NO_AMOUNT };
        const lacking = capped.filter((plan) => !this.fits(this.leaseOf(plan), amount));
        const outcome = await this.askLacking(accountId, lacking, amount);
        if (outcome === "asked") asked++;
        else if (outcome === "covered" || outcome === "bus lost") continue;
        else if (
          outcome.kind === "refused" &&
          retries < HELD_RETRY_DELAYS_MS.length &&
          heldElsewhere(outcome, amount)
        ) {
          await sleep(HELD_RETRY_DELAYS_MS[retries++] as number);
        } else return outcome;
      }
    } finally {
      this.stopWaiting(capped);
    }
  }

  /** Adds `extra` to a request's hold (a stream that grew), asking the leader if a lease lacks it. */
  async extend(accountId: string, hold: Hold, plans: CounterPlan[], extra: Amount): Promise<Admission> {
    // The counters the hold is on (in its leases' order): what the request held at first decides.
    const capped = plans.filter((plan) => holdsOn(plan, hold.amount));
    this.startWaiting(capped);
    try {
      for (let asked = 0; ; ) {
        const now = this.options.clock();
        const lacking = capped.filter((_, i) => {
          const lease = hold.leases[i] as LocalLease;
          return this.usableUntil(lease) <= now || !fitsUnderCap(lease.committed, grantOf(lease), extra);
        });
        if (lacking.length === 0) {
          for (const lease of hold.leases) {
            lease.committed = addAmounts(lease.committed, extra);
            lease.lastUsedAt = now;
          }
          hold.amount = addAmounts(hold.amount, extra);
          return { kind: "held", hold };
        }
        const lackingLeases = lacking.map((plan) => hold.leases[capped.indexOf(plan)] as LocalLease);
        // A stream keeps the leases it started on: one the leader replaced cannot grow.
        if (lackingLeases.some((lease) => this.leases.get(chainId(lease.key)) !== lease)) {
          return { kind: "unavailable" };
        }
        if (asked === 2) return { kind: "refused", plan: capped[0] as CounterPlan, used: NO_AMOUNT };
        const outcome = await this.askLacking(accountId, lacking, extra);
        if (outcome === "asked") asked++;
        else if (outcome !== "covered" && outcome !== "bus lost") return outcome;
      }
    } finally {
      this.stopWaiting(capped);
    }
  }

  /**
   * The connection to the bus is gone: until a leader answers again, a lease stays usable up to
   * `outageGraceMs` after its last confirmation instead of running out with its TTL.
   */
  busLost() {
    this.bus.lost();
  }

  /**
   * A new leader takes the census of lease holders (`CONSUMPTION_CENSUS_SUBJECT`): a leader is
   * reachable, so this proxy stops admitting on the leases its predecessor granted (now, in an
   * outage ridden or in a later one) and on any grant still on its way for an ask sent before
   * (`apply`); it asks the new leader instead. Requests in flight keep their holds: returns how
   * many holds are still open on leases a census ended (a request holds on each of its capped
   * counters), whose usage no event carries yet. None is added: an ended lease admits nothing.
   */
  census(): number {
    const now = this.options.clock();
    this.bus.leaderAnswered();
    this.censusAt = now;
    for (const lease of this.leases.values()) {
      endLeaseAt(lease, now, this.options.outageGraceMs);
      if (lease.holds > 0) this.endedWhileHeld.add(lease);
    }
    let holdsOpen = 0;
    for (const lease of this.endedWhileHeld) {
      if (lease.holds === 0) this.endedWhileHeld.delete(lease);
      holdsOpen += lease.holds;
    }
    return holdsOpen;
  }

  /** The connection is back: asks can reach a leader again (whose answer ends the outage grace). */
  busReconnected() {
    this.bus.reconnected();
  }

  /** The request ended: its hold is swapped for what it really used, at once. */
  finish(hold: Hold, actual: Amount) {
    const now = this.options.clock();
    for (const lease of hold.leases) {
      lease.committed = addAmounts(subtractAmounts(lease.committed, hold.amount), actual);
      lease.lastUsedAt = now;
      lease.holds--;
    }
    hold.amount = actual;
  }

  /**
   * The finished request's event is on its way to the stream: its leases are kept alive (renewed,
   * or shrunk and renewed when idle) until the returned function is called, once the stream has
   * it or it was dropped. Through a JetStream outage events wait in the proxy; a lease let lapse
   * meanwhile would have the leader free usage no counter has yet, and grant it again.
   */
  untilStored(hold: Hold): () => void {
    for (const lease of hold.leases) lease.unsent++;
    let stored = false;
    return () => {
      if (stored) return;
      stored = true;
      for (const lease of hold.leases) lease.unsent--;
    };
  }

  /**
   * Off the request path: renews leases in use that run out soon or run low, shrinks idle ones to
   * what they committed (so other proxies can have the rest), forgets expired ones once the bus
   * answers (one that ran out while the bus was silent is what this proxy rides out the outage on,
   * should the silence turn out to be one). A lease in use whose window ends within the outage
   * grace gets its next window leased ahead, so that a bus outage across the window's end does not
   * leave the new window's requests without headroom.
   */
  async maintain(): Promise<void> {
    const now = this.options.clock();
    const work: Promise<unknown>[] = [];
    const ahead: CounterPlan[] = [];
    const ended: [string, LocalLease][] = [];
    for (const [id, lease] of this.leases) {
      if (this.usableUntil(lease) <= now) {
        // Its answer may renew it: forgotten now, the grant would reach a lease no longer here.
        if (lease.asking) continue;
        // Ran out with requests or events still on it (the leader did not answer its renewals):
        // asked again, a leader that still has it takes it back (a new term's lease is new) and
        // keeps their usage out of the headroom it grants.
        if (lease.holds + lease.unsent > 0) {
          if (this.bus.connected && lease.id !== undefined) work.push(this.renew(lease));
        } else ended.push([id, lease]);
        continue;
      }
      if (!this.bus.connected || lease.id === undefined || lease.asking) continue;
      const ttlLeft = lease.expiresAt - now;
      // A lease of a window still to come is not idle before its window starts, nor one a request
      // waits to hold on (for another counter's grant, say).
      const idle =
        !this.waiting.has(id) &&
        now - Math.max(lease.lastUsedAt, lease.key.window_start * 1000) >= this.options.idleMs;
      if (idle) {
        // Requests still in flight on it, or events not in the stream yet, must not outlive it: the
        // leader would free what they hold. Shrunk again, it lives another TTL and gives back
        // anything their ends freed.
        const held = lease.holds + lease.unsent > 0 && ttlLeft < lease.ttlMs / 2;
        if (held || hasSpare(lease)) work.push(this.shrink(lease));
      } else if (ttlLeft < lease.ttlMs / 2 || runningLow(lease)) work.push(this.renew(lease));
      const windowStart = lease.key.window_start * 1000;
      const endsWithinGrace =
        windowStart + lease.key.window_seconds * 1000 - now <= this.options.outageGraceMs;
      if (!idle && windowStart <= now && endsWithinGrace) {
        const next = nextWindowPlan(lease);
        if (!this.leases.has(next.id)) ahead.push(next);
      }
    }
    // After the loop: a lease added while iterating would be visited (and, not granted yet, dropped).
    // Asking for nothing yet, the next window's lease gets its share of the free headroom.
    for (const next of ahead) work.push(this.renew(this.leaseOf(next)));
    if (ended.length > 0) work.push(this.forgetOnceBusAnswers(ended, now));
    await Promise.allSettled(work);
  }

  /**
   * The leader refused another proxy on these counters while this one's leases there hold headroom:
   * gives back what no request committed now (a shrink), instead of once the lease is idle.
   */
  async reclaim(counterIds: string[]): Promise<void> {
    if (!this.bus.connected) return;
    const work: Promise<void>[] = [];
    for (const id of counterIds) {
      const lease = this.leases.get(id);
      if (!lease || lease.id === undefined || lease.asking) continue;
      if (hasSpare(lease)) work.push(this.shrink(lease));
    }
    await Promise.allSettled(work);
  }

  /** Gives back what no request committed (a clean stop), so other proxies can use it at once. */
  async releaseAll(): Promise<void> {
    await Promise.allSettled([...this.leases.values()].map((lease) => this.shrink(lease)));
  }

  private startWaiting(plans: CounterPlan[]) {
    for (const plan of plans) this.waiting.set(plan.id, (this.waiting.get(plan.id) ?? 0) + 1);
  }

  private stopWaiting(plans: CounterPlan[]) {
    for (const plan of plans) {
      const waiting = (this.waiting.get(plan.id) ?? 1) - 1;
      if (waiting > 0) this.waiting.set(plan.id, waiting);
      else this.waiting.delete(plan.id);
    }
  }

  private async forgetOnceBusAnswers(ended: [string, LocalLease][], endedBy: number) {
    if (!(await this.bus.stillAnswers())) return;
    for (const [id, lease] of ended) {
      if (this.leases.get(id) === lease && !lease.asking && this.usableUntil(lease) <= endedBy) {
        this.leases.delete(id);
      }
    }
  }

  private fits(lease: LocalLease, amount: Amount): boolean {
    return (
      lease.id !== undefined &&
      this.usableUntil(lease) > this.options.clock() &&
      fitsUnderCap(lease.committed, grantOf(lease), amount)
    );
  }

  private usableUntil(lease: LocalLease): number {
    return this.bus.inOutage
      ? Math.max(lease.expiresAt, lease.confirmedAt + this.options.outageGraceMs)
      : lease.expiresAt;
  }

  private hold(plans: CounterPlan[], capped: CounterPlan[], leases: LocalLease[], amount: Amount): Hold {
    const now = this.options.clock();
    for (const lease of leases) {
      lease.committed = addAmounts(lease.committed, amount);
      lease.lastUsedAt = now;
      lease.holds++;
    }
    const counters = plans.map((plan) => {
      const index = capped.indexOf(plan);
      return (index === -1 ? undefined : leases[index]?.counter) ?? reservedCounterOf(plan.key);
    });
    return { leases, amount, counters };
  }

  private leaseOf(plan: CounterPlan): LocalLease {
    let lease = this.leases.get(plan.id);
    if (lease) {
      if (
        lease.caps.capTokens !== plan.capTokens ||
        lease.caps.capCostNanos !== plan.capCostNanos ||
        lease.caps.capCalls !== plan.capCalls
      ) {
        lease.caps = { capTokens: plan.capTokens, capCostNanos: plan.capCostNanos, capCalls: plan.capCalls };
      }
    } else {
      lease = ungrantedLease(plan, this.options.clock());
      this.leases.set(plan.id, lease);
    }
    return lease;
  }

  /**
   * Asks the leader for `need` on the lacking leases: `asked` when it granted; `covered` when an
   * earlier ask's answer already made room (no ask sent: a burst after an idle shrink would
   * otherwise send one ask per request, one after another); a refusal, or a leader that does not
   * answer while the bus does, ends it. `bus lost` when the bus turned out lost meanwhile: the
   * leases are on their outage grace now, which may cover what the leader would not answer.
   */
  private async askLacking(
    accountId: string,
    lacking: CounterPlan[],
    need: Amount,
  ): Promise<Exclude<Admission, { kind: "held" }> | "asked" | "covered" | "bus lost"> {
    if (!this.bus.connected) return { kind: "unavailable" };
    let grants: LeaseGrant[] | undefined;
    try {
      grants = await this.ask(
        accountId,
        lacking,
        (current) => lacking.map((plan, i) => leaseAsk(plan, current[i] as LocalLease, need)),
        (current) => current.every((lease) => this.fits(lease, need)),
      );
    } catch {
      // No answer: from the leader alone (fail closed), or from a bus gone silent, which only a
      // question to the bus tells apart before the client declares the connection stale.
      return (await this.bus.stillAnswers()) ? { kind: "unavailable" } : "bus lost";
    }
    if (grants === undefined) return "covered";
    const refused = grants.findIndex((grant) => !grant.fits);
    const plan = lacking[refused];
    const grant = grants[refused];
    return plan && grant ? { kind: "refused", plan, used: amountOfQuantity(grant.used) } : "asked";
  }

  /**
   * Sends one ask for the current leases of `plans` once their earlier asks are answered (so
   * grants apply in order, and each ask names the lease as the last grant left it), and applies
   * the reply: a grant of a new lease id starts a new lease, from nothing committed. An earlier ask
   * the leader did not answer fails this one too: otherwise every request queued behind a silent
   * leader would wait out one timeout per request ahead of it. Nothing is sent (undefined) when,
   * after waiting for earlier asks, `covered` says their answers gave what this one wanted.
   */
  private async ask(
    accountId: string,
    plans: CounterPlan[],
    asks: (leases: LocalLease[]) => LeaseAsk[],
    covered?: (leases: LocalLease[]) => boolean,
  ): Promise<LeaseGrant[] | undefined> {
    let leases = plans.map((plan) => this.leaseOf(plan));
    let waited = false;
    for (;;) {
      const pending = leases.map((lease) => lease.asking).filter((asking) => asking !== undefined);
      if (pending.length === 0) break;
      waited = true;
      const settled = await Promise.allSettled(pending);
      const unanswered = settled.find((outcome) => outcome.status === "rejected");
      if (unanswered) throw unanswered.reason;
      leases = plans.map((plan) => this.leaseOf(plan));
    }
    if (waited && covered?.(leases)) return undefined;
    const sentAt = this.options.clock();
    const sending = this.askLeader({
      account_id: accountId,
      proxy_id: this.options.proxyId,
      asks: asks(leases),
    });
    for (const lease of leases) lease.asking = sending;
    try {
      const reply = await sending;
      this.bus.leaderAnswered();
      reply.grants.forEach((grant, i) => {
        const plan = plans[i];
        const lease = leases[i];
        if (plan && lease) this.apply(plan, lease, grant, sentAt, reply.ttl_ms);
      });
      return reply.grants;
    } finally {
      for (const lease of leases) if (lease.asking === sending) lease.asking = undefined;
    }
  }

  private apply(plan: CounterPlan, lease: LocalLease, grant: LeaseGrant, sentAt: number, ttlMs: number) {
    if (grant.lease_id === undefined) return;
    let current = lease;
    if (grant.lease_id !== lease.id) {
      current = leaseUnderNewId(lease, grant.lease_id);
      this.leases.set(plan.id, current);
    }
    current.granted = amountOfQuantity(grant.granted);
    current.expiresAt = sentAt + ttlMs;
    current.ttlMs = ttlMs;
    current.confirmedAt = sentAt;
    if (sentAt <= this.censusAt) endLeaseAt(current, this.censusAt, this.options.outageGraceMs);
  }

  private async renew(lease: LocalLease) {
    const plan = planOfLease(lease);
    await this.ask(plan.key.account_id, [plan], ([current]) => [
      leaseAsk(plan, current as LocalLease, NO_AMOUNT),
    ]);
  }

  private async shrink(lease: LocalLease) {
    if (lease.id === undefined) return;
    const plan = planOfLease(lease);
    await this.ask(plan.key.account_id, [plan], ([current = lease]) => {
      // From the moment the ask leaves, admit nothing beyond what it says is committed.
      current.granted = { ...current.committed };
      return [{ ...leaseAsk(plan, current, NO_AMOUNT), shrink: true }];
    });
  }
}

/**
 * A proxy's answer to a new leader's census (`CONSUMPTION_CENSUS_SUBJECT`): its leases end
 * (`LeaseTable.census`), and it says what usage it still owes the stream. The leader waits for
 * both numbers to be 0. A request's hold is released and its event queued in one synchronous step,
 * so no request is ever counted in neither.
 */
export function answerCensus(
  table: LeaseTable,
  proxyId: string,
  eventsPending: () => number,
): ConsumptionCensusAnswer {
  const holdsOpen = table.census();
  return { v: 1, proxy_id: proxyId, events_pending: eventsPending(), holds_open: holdsOpen };
}

/** A refusal whose counter's settled usage leaves room for `amount`: other holds have it for now. */
const heldElsewhere = (refusal: { plan: CounterPlan; used: Amount }, amount: Amount) =>
  fitsUnderCap(refusal.used, refusal.plan, amount);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `lease` holds headroom no request committed: what a shrink gives back. */
const hasSpare = (lease: { granted: Amount; committed: Amount }) =>
  !isNoAmount(amountBeyond(lease.granted, lease.committed));

/** Ends `lease` by `at`: usable no longer, not even riding an outage. */
function endLeaseAt(lease: LocalLease, at: number, outageGraceMs: number) {
  lease.expiresAt = Math.min(lease.expiresAt, at);
  lease.confirmedAt = Math.min(lease.confirmedAt, lease.expiresAt - outageGraceMs);
}
