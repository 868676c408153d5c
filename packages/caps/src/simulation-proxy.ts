import type { LeaseReply, LeaseRequest, ReservedCounter } from "@agentnet/contracts";
import {
  type Admission,
  type Amount,
  amountOfToolCall,
  type CounterPlan,
  chainId,
  fitsUnderCap,
  type Hold,
  holdsOn,
  LeaseTable,
  type LocalLease,
  NO_AMOUNT,
  planCounters,
} from "./index";
import { grantOf } from "./local-lease";
import type { World } from "./simulation";
import { ACCOUNT, OUTAGE_GRACE_MS } from "./simulation-leader";

/** One request of a schedule: where and when it arrives, its worst case, what it uses, how long it runs. */
export interface RequestPlan {
  proxy: number;
  atMs: number;
  worstTokens: number;
  /** The share of its worst case it uses (a stream: at most what it could hold). */
  usedShare: number;
  durationMs: number;
  /** A stream holds a quarter of its worst case and grows a quarter at a time as it runs. */
  stream: boolean;
  /** Ends without an answer and without tokens: its event counts nothing. */
  failed: boolean;
  /** An MCP tool call: one call at its server's price (`TOOL_CALL`), no tokens, never a stream. */
  toolCall?: boolean;
}

const NANOS_PER_TOKEN = 1_000;
const tokensAmount = (tokens: number): Amount => ({ tokens, costNanos: tokens * NANOS_PER_TOKEN, calls: 0 });
/** What one tool call counts: its price and one call. */
export const TOOL_CALL = amountOfToolCall(50_000);

/** The grant as caps on what the lease may commit (what `LeaseTable` admits against). */

const counterIdOf = (accountId: string, { lease_id: _, ...counter }: ReservedCounter) =>
  chainId({ account_id: accountId, ...counter });

/**
 * One gateway proxy: its `LeaseTable`, asking the simulated leader, and its requests as the
 * proxy's request path runs them (hold from the leases or ask, stream and grow, finish, publish).
 */
export class SimulatedProxy {
  readonly table: LeaseTable;
  /** When this proxy's latest ask reaches the leader: its asks arrive in the order sent. */
  askArrival = 0;
  /** The lease each counter's latest admission held on, and the lease id the latest reply named. */
  private readonly heldOn = new Map<string, LocalLease>();
  private readonly leaseIds = new Map<string, string>();
  private admitting = 0;
  private admissionsStarted = 0;
  private leaderRefusals = 0;
  private maintaining = false;

  constructor(
    private readonly world: World,
    readonly id: string,
  ) {
    this.table = new LeaseTable((request) => world.ask(this, request), {
      proxyId: id,
      clock: () => world.clock.now,
      idleMs: 2_000,
      outageGraceMs: OUTAGE_GRACE_MS,
      busAnswers: () => world.busAnswers(),
    });
  }

  /** The leader's reply reached this proxy. */
  heard(request: LeaseRequest, reply: LeaseReply) {
    reply.grants.forEach((grant, i) => {
      const ask = request.asks[i];
      if (!ask) return;
      if (!grant.fits) this.leaderRefusals++;
      if (grant.lease_id !== undefined)
        this.leaseIds.set(counterIdOf(request.account_id, ask.counter), grant.lease_id);
    });
  }

  /** The proxy's 500 ms timer: one `maintain` at a time. */
  maintain() {
    if (this.maintaining) return;
    this.maintaining = true;
    void this.table.maintain().finally(() => {
      this.maintaining = false;
    });
  }

  /** A request as the proxy runs it: hold from the leases or ask, grow a stream, finish, publish. */
  async serve(request: RequestPlan) {
    const { clock } = this.world;
    const plans = planCounters(ACCOUNT, this.world.checks, clock.now);
    const pieces = request.stream && !request.toolCall ? 4 : 1;
    const step = request.toolCall ? TOOL_CALL : tokensAmount(Math.ceil(request.worstTokens / pieces));
    const admission = await this.admit(plans, step, () => {
      const hold = this.table.holdFromLeases(plans, step);
      return hold ? { kind: "held", hold } : this.table.admit(ACCOUNT, plans, step);
    });
    if (admission.kind !== "held") return;
    const { hold } = admission;
    this.remember(plans, hold);
    const used = request.toolCall ? 0 : Math.floor(request.usedShare * request.worstTokens);
    const pause = Math.floor(request.durationMs / pieces);
    for (let piece = 1; piece < pieces && hold.amount.tokens < used; piece++) {
      await clock.sleep(pause);
      const grown = await this.admit(plans, step, () => this.table.extend(ACCOUNT, hold, plans, step));
      // The proxy ends the stream as the model would at its output limit.
      if (grown.kind !== "held") {
        this.world.stats.cutStreams++;
        break;
      }
    }
    await clock.sleep(pause);
    const actual = request.failed
      ? NO_AMOUNT
      : request.toolCall
        ? TOOL_CALL
        : tokensAmount(Math.min(used, hold.amount.tokens));
    this.table.finish(hold, actual);
    this.world.finished(this.id, hold.counters, actual, request.failed, request.toolCall === true);
  }

  /** Runs one admission (or a stream's growth) and checks what the caller was told. */
  private async admit(
    plans: CounterPlan[],
    amount: Amount,
    attempt: () => Admission | Promise<Admission>,
  ): Promise<Admission> {
    const { stats } = this.world;
    const alreadyAdmitting = this.admitting > 0;
    const started = ++this.admissionsStarted;
    const refusalsBefore = this.leaderRefusals;
    this.admitting++;
    let admission: Admission;
    try {
      admission = await attempt();
    } finally {
      this.admitting--;
    }
    const alone = !alreadyAdmitting && this.admissionsStarted === started;
    if (admission.kind === "held") {
      stats.held++;
      if (this.world.busLost) stats.heldWhileBusLost++;
    } else if (admission.kind === "refused") {
      stats.refused++;
      if (amount.calls > 0) stats.refusedToolCalls++;
      this.assertRefusedOnlyByTheLeader(alone, this.leaderRefusals > refusalsBefore, amount);
    } else {
      stats.unavailable++;
      this.assertRidesOutOutage(plans, amount);
    }
    return admission;
  }

  /**
   * refusedOnlyByTheLeader: a proxy refuses a request only when the leader refused an ask of it,
   * unless another request of the same proxy was admitted meanwhile (it may have taken the room a
   * grant made for this one: the proxy asks at most twice).
   */
  private assertRefusedOnlyByTheLeader(alone: boolean, leaderRefused: boolean, amount: Amount) {
    if (alone && !leaderRefused) {
      this.world.fail(
        "refusedOnlyByTheLeader",
        `${this.id} refused ${JSON.stringify(amount)} the leader granted`,
      );
    }
  }

  private remember(plans: CounterPlan[], hold: Hold) {
    plans
      .filter((plan) => holdsOn(plan, hold.amount))
      .forEach((plan, i) => {
        const lease = hold.leases[i];
        if (lease) this.heldOn.set(plan.id, lease);
      });
  }

  /**
   * ridesOutOutage: while the bus is down, a request that fits in the leases the proxy held when
   * the outage began, each confirmed by the leader within the outage grace, is admitted.
   */
  private assertRidesOutOutage(plans: CounterPlan[], amount: Amount) {
    const { world } = this;
    const now = world.clock.now;
    const capped = plans.filter((plan) => holdsOn(plan, amount));
    if (!world.busDown || capped.length === 0) return;
    const covered = capped.every((plan) => {
      const lease = this.heldOn.get(plan.id);
      return (
        lease !== undefined &&
        lease.id === this.leaseIds.get(plan.id) &&
        lease.expiresAt > world.outageStartedAt &&
        lease.confirmedAt + OUTAGE_GRACE_MS > now &&
        fitsUnderCap(lease.committed, grantOf(lease), amount)
      );
    });
    if (covered)
      world.fail(
        "ridesOutOutage",
        `${this.id} answered unavailable for ${JSON.stringify(amount)} its leases held`,
      );
  }
}
