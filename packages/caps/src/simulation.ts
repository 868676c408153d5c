import type { GatewayRequestEvent, LeaseReply, LeaseRequest, ReservedCounter } from "@agentnet/contracts";
import { makeEvent } from "@agentnet/testkit";
import type { Amount, CapCheck } from "./index";
import { FakeClock, seededRandom } from "./simulation-clock";
import { ACCOUNT, LEASE_TTL_MS, SimulatedLeader } from "./simulation-leader";
import { type RequestPlan, SimulatedProxy } from "./simulation-proxy";

/** The proxies' AGN_LEASE_TIMEOUT_MS. */
const ASK_TIMEOUT_MS = 2_000;
/** A connection declares a silent bus lost 3 to 4 s after its last answer (`connectBus`). */
const LOSS_VERDICT_MS = 3_500;
const ACK_WAIT_MS = 3_000;
/** Requests arrive within this long; the windows (20 s and 30 s) end at least once within it. */
export const RUN_MS = 40_000;
const START = Date.UTC(2031, 0, 1);

export interface Faults {
  /** Chance that an ask or its reply is lost (the ask times out), or that an event's ack is (redelivery). */
  loss: number;
  /** Chance that a reply, or an event, comes twice. */
  duplication: number;
  maxDelayMs: number;
  /** Consumer lag: an event settles this long after its request ended (later after an outage). */
  maxEventDelayMs: number;
}

export interface Schedule {
  seed: number;
  proxies: number;
  capTokens: number;
  capCostNanos: number;
  /** The cap on user u1's tool calls (its tokens' counter); absent in schedules without tool calls. */
  capCalls?: number;
  /** Where in the windows the run starts. */
  startOffsetMs: number;
  faults: Faults;
  outage: { atMs: number; lengthMs: number } | null;
  requests: RequestPlan[];
}

/** What a run went through: the property test checks the schedules reach every path. */
export interface Stats {
  held: number;
  heldWhileBusLost: number;
  refused: number;
  /** Tool calls refused: their calls cap (or their price) had no room. */
  refusedToolCalls: number;
  unavailable: number;
  leaderRefusals: number;
  cutStreams: number;
  duplicateSettlements: number;
  unleasedSettlements: number;
}

/**
 * Several proxies' lease tables and one leader's book on a fake clock and a fake bus, running one
 * schedule. The bus loses, delays and duplicates what NATS can: a lease ask or reply is lost or
 * late (the ask times out), a reply comes twice (the second is dropped, as by nats.js), an event
 * settles late, twice, or again after a lost ack. Asks of one proxy reach the leader at most once
 * and in the order sent, as NATS core delivers one connection's messages. One outage may take the
 * whole bus down; past the loss verdict every side is told, as `watchConnection` tells them.
 */
export class World {
  readonly clock: FakeClock;
  readonly checks: CapCheck[];
  readonly proxies: SimulatedProxy[];
  readonly stats: Stats = {
    held: 0,
    heldWhileBusLost: 0,
    refused: 0,
    refusedToolCalls: 0,
    unavailable: 0,
    leaderRefusals: 0,
    cutStreams: 0,
    duplicateSettlements: 0,
    unleasedSettlements: 0,
  };
  busDown = false;
  busLost = false;
  outageStartedAt = Number.NEGATIVE_INFINITY;
  private failure: Error | undefined;
  private readonly leader: SimulatedLeader;
  private readonly random: () => number;
  private requestIds = 0;
  /** Requests admitted or waiting to be, not yet finished. */
  private inFlight = 0;
  private readonly waitingForBus: { resolve: () => void; reject: (error: Error) => void }[] = [];

  constructor(private readonly schedule: Schedule) {
    this.clock = new FakeClock(START + schedule.startOffsetMs);
    this.random = seededRandom(schedule.seed);
    const check = { source: "budget_rule", source_id: "rule" } as const;
    const window = (dimension_kind: "user" | "group", dimension_id: string, window_seconds: number) =>
      ({ ...check, dimension_kind, dimension_id, window_seconds }) as const;
    this.checks = [
      { ...window("user", "u1", 20), measure: "tokens", cap: schedule.capTokens },
      { ...window("group", "g1", 30), measure: "cost", cap: schedule.capCostNanos },
      { ...window("user", "u1", 20), measure: "calls", cap: schedule.capCalls ?? 0 },
      // Counted, uncapped: settles without a lease.
      { ...window("group", "g2", 30), measure: "tokens", cap: 0 },
    ];
    this.leader = new SimulatedLeader(this);
    this.proxies = Array.from({ length: schedule.proxies }, (_, i) => new SimulatedProxy(this, `proxy-${i}`));
  }

  /** Runs the schedule to its end, once every request finished and every event settled. */
  async run(): Promise<Stats> {
    const { clock, schedule } = this;
    const end = clock.now + RUN_MS;
    // The proxies' timers run as long as they serve: a request that arrived near the end still
    // runs for up to 15 s, and its leases must be renewed meanwhile as a live proxy renews them.
    const serving = () => clock.now < end || this.inFlight > 0;
    let servedUntil = end;
    clock.every(500, serving, () => {
      for (const proxy of this.proxies) proxy.maintain();
    });
    clock.every(
      1_000,
      () => serving() || clock.now < servedUntil + LEASE_TTL_MS,
      () => this.leader.sweep(this.busAnswers()),
    );
    for (const request of schedule.requests) {
      const proxy = this.proxies[request.proxy % this.proxies.length] as SimulatedProxy;
      clock.after(request.atMs, () => {
        this.inFlight++;
        proxy
          .serve(request)
          .catch((error: unknown) => this.failed(error))
          .finally(() => {
            this.inFlight--;
            servedUntil = Math.max(servedUntil, clock.now);
          });
      });
    }
    const { outage } = schedule;
    if (outage) clock.after(outage.atMs, () => this.startOutage(outage.lengthMs));
    await clock.runUntil(Number.POSITIVE_INFINITY);
    if (this.failure) throw this.failure;
    this.leader.assertCountedExactlyOnce();
    return this.stats;
  }

  fail(invariant: string, detail: string): never {
    throw this.failed(new Error(`${invariant}: ${detail} (at +${this.clock.now - START} ms)`));
  }

  /** A proxy's `AskLeader`: a NATS request to the leader with the proxy's timeout. */
  ask(proxy: SimulatedProxy, request: LeaseRequest): Promise<LeaseReply> {
    const { faults } = this.schedule;
    return new Promise((resolve, reject) => {
      let answered = false;
      this.clock.after(ASK_TIMEOUT_MS, () => {
        if (answered) return;
        answered = true;
        reject(new Error("lease ask timed out"));
      });
      if (this.busDown || this.chance(faults.loss)) return;
      proxy.askArrival = Math.max(proxy.askArrival, this.clock.now + this.delay());
      this.clock.at(proxy.askArrival, () => {
        if (this.busDown) return;
        const reply = this.leader.lease(request);
        const copies = this.chance(faults.loss) ? 0 : this.chance(faults.duplication) ? 2 : 1;
        for (let copy = 0; copy < copies; copy++) {
          this.clock.after(this.delay(), () => {
            if (answered || this.busDown) return;
            answered = true;
            proxy.heard(request, reply);
            resolve(reply);
          });
        }
      });
    });
  }

  /** A request ended: the book must come to count it, and its event goes out. */
  finished(proxyId: string, counters: ReservedCounter[], actual: Amount, failed: boolean, toolCall: boolean) {
    this.leader.expect(counters, actual, failed);
    const event = makeEvent({
      id: `req-${proxyId}-${++this.requestIds}`,
      account_id: ACCOUNT,
      status_code: failed ? 502 : 200,
      input_tokens: actual.tokens,
      output_tokens: 0,
      total_tokens: actual.tokens,
      cost_usd: actual.costNanos / 1e9,
      reserved_counters: counters,
      ...(toolCall
        ? {
            tool_call: {
              server_id: "mcp_sim",
              server: "sim",
              tool: "t",
              request_bytes: 1,
              response_bytes: 1,
            },
          }
        : {}),
    });
    const { maxEventDelayMs, duplication } = this.schedule.faults;
    this.deliver(event, this.delay(maxEventDelayMs));
    // Published twice: a retry after a lost publish ack, past the stream's deduplication.
    if (this.chance(duplication)) this.deliver(event, this.delay(maxEventDelayMs));
  }

  /** Resolves once the bus answers, rejects once it is declared lost (nats.js `flush`). */
  busAnswers(): Promise<void> {
    if (!this.busDown) return Promise.resolve();
    if (this.busLost) return Promise.reject(new Error("bus lost"));
    return new Promise((resolve, reject) => this.waitingForBus.push({ resolve, reject }));
  }

  private failed(error: unknown): Error {
    this.failure ??= error instanceof Error ? error : new Error(String(error));
    return this.failure;
  }

  private chance(probability: number) {
    return this.random() < probability;
  }

  private delay(maxMs = this.schedule.faults.maxDelayMs) {
    return 1 + Math.floor(this.random() * maxMs);
  }

  private deliver(event: GatewayRequestEvent, afterMs: number) {
    this.clock.after(afterMs, () => {
      // Buffered by the proxy, or not acked by the stream, until the bus is back.
      if (this.busDown) return this.deliver(event, ACK_WAIT_MS);
      // Its ack is lost: it settles now, and is delivered again after the ack wait.
      if (this.chance(this.schedule.faults.loss)) this.deliver(event, ACK_WAIT_MS);
      this.leader.settle(this.chance(this.schedule.faults.duplication) ? [event, event] : [event]);
    });
  }

  private startOutage(lengthMs: number) {
    this.busDown = true;
    this.outageStartedAt = this.clock.now;
    if (lengthMs > LOSS_VERDICT_MS) {
      this.clock.after(LOSS_VERDICT_MS, () => {
        this.busLost = true;
        for (const waiting of this.waitingForBus.splice(0)) waiting.reject(new Error("bus lost"));
        for (const proxy of this.proxies) proxy.table.busLost();
        this.leader.busLost();
      });
    }
    this.clock.after(lengthMs, () => {
      this.busDown = false;
      for (const waiting of this.waitingForBus.splice(0)) waiting.resolve();
      if (!this.busLost) return;
      this.busLost = false;
      for (const proxy of this.proxies) proxy.table.busReconnected();
    });
  }
}
