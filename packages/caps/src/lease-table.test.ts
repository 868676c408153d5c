import type { LeaseAsk, LeaseGrant, LeaseRequest } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import type { Amount } from "./amount";
import { type CounterKey, type CounterPlan, chainId } from "./counters";
import {
  type Admission,
  type AskLeader,
  answerCensus,
  HELD_RETRY_DELAYS_MS,
  LeaseTable,
} from "./lease-table";
import type { Hold } from "./local-lease";

const TTL_MS = 6_000;
const IDLE_MS = 2_000;
const OUTAGE_GRACE_MS = 75_000;
const HOUR_START = Date.UTC(2031, 0, 1, 10, 0, 0) / 1000;
const ACCOUNT = "acc-1";

/** A clock the test moves by hand. */
class FakeClock {
  now = HOUR_START * 1000 + 60_000;
  readonly read = () => this.now;
  advance(ms: number) {
    this.now += ms;
  }
}

/**
 * The leader as a proxy sees it through `AskLeader`: one counter capped at `cap` tokens, of which
 * others already used `used`; it grants `committed + need` and up to `spare` more, keeps a lease's
 * id unless told to forget it, answers nothing while `silent`, and only once `answerAfter` resolves
 * when set (asks in flight that the test acts around).
 */
class FakeLeader {
  cap = 1_000;
  used = 0;
  /** Headroom other proxies' leases hold: not settled usage, but no room either. */
  heldByOthers = 0;
  spare = 500;
  silent = false;
  answerAfter: Promise<void> | undefined;
  private leaseIds = 0;
  private forgotten = false;
  readonly requests: LeaseRequest[] = [];

  readonly ask: AskLeader = async (request) => {
    this.requests.push(request);
    if (this.answerAfter) await this.answerAfter;
    if (this.silent) throw new Error("request timed out");
    return { grants: request.asks.map((ask) => this.grant(ask)), ttl_ms: TTL_MS };
  };

  /** Holds its answers until the returned function is called. */
  answerLater(): () => void {
    let answer = () => {};
    this.answerAfter = new Promise((resolve) => {
      answer = resolve;
    });
    return answer;
  }

  /** It lost its leases (a new leader): the next ask of each starts a new one. */
  forgetLeases() {
    this.forgotten = true;
  }

  get asks(): LeaseAsk[] {
    return this.requests.flatMap((request) => request.asks);
  }

  get lastAsk(): LeaseAsk | undefined {
    return this.asks.at(-1);
  }

  private grant(ask: LeaseAsk): LeaseGrant {
    const known = this.forgotten ? undefined : ask.counter.lease_id;
    this.forgotten = false;
    const lease_id = known ?? `lease-${++this.leaseIds}`;
    const committed = known ? ask.committed.tokens : 0;
    const room = this.cap - this.used - this.heldByOthers;
    const used = { tokens: this.used, cost_nanos: 0, calls: 0 };
    if (ask.shrink)
      return { lease_id, granted: { tokens: committed, cost_nanos: 0, calls: 0 }, fits: true, used };
    const wanted = committed + ask.need.tokens;
    if (wanted > room)
      return { lease_id, granted: { tokens: committed, cost_nanos: 0, calls: 0 }, fits: false, used };
    return {
      lease_id,
      granted: { tokens: Math.min(room, wanted + this.spare), cost_nanos: 0, calls: 0 },
      fits: true,
      used,
    };
  }
}

/** Whether NATS answers a PING: `silent` leaves it pending, as a bus that stopped answering does. */
class FakeBus {
  silent = false;
  pings = 0;
  readonly answers = () => {
    this.pings++;
    return this.silent ? new Promise<void>(() => {}) : Promise.resolve();
  };
}

/** Lets every promise chain already started run as far as it can. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const KEY: CounterKey = {
  account_id: ACCOUNT,
  dimension_kind: "user",
  dimension_id: "u1",
  window_seconds: 3600,
  window_start: HOUR_START,
};

/** A counter of `key` capped at 1,000 tokens. */
const planOf = (key: CounterKey = KEY): CounterPlan => ({
  key,
  id: chainId(key),
  capTokens: 1_000,
  capCostNanos: undefined,
  capCalls: undefined,
  checks: [],
});

const tokens = (count: number): Amount => ({ tokens: count, costNanos: 0, calls: 0 });

function setup() {
  const clock = new FakeClock();
  const leader = new FakeLeader();
  const bus = new FakeBus();
  const table = new LeaseTable(leader.ask, {
    proxyId: "proxy-1",
    clock: clock.read,
    idleMs: IDLE_MS,
    outageGraceMs: OUTAGE_GRACE_MS,
    busAnswers: bus.answers,
  });
  const admit = (amount: number, plans = [planOf()]) => table.admit(ACCOUNT, plans, tokens(amount));
  const held = async (amount: number, plans = [planOf()]): Promise<Hold> => {
    const admission: Admission = await admit(amount, plans);
    if (admission.kind !== "held") throw new Error(`expected a hold, got ${admission.kind}`);
    return admission.hold;
  };
  const holdFromLeases = (amount: number, plans = [planOf()]) => table.holdFromLeases(plans, tokens(amount));
  return { clock, leader, bus, table, admit, held, holdFromLeases };
}

describe("LeaseTable: holds", () => {
  it("asks the leader when no lease has room, for what the request needs, and holds it", async () => {
    const { leader, admit, holdFromLeases } = setup();
    expect(holdFromLeases(100)).toBeUndefined();
    const admission = await admit(100);
    expect(admission).toMatchObject({ kind: "held", hold: { amount: tokens(100) } });
    expect(leader.requests).toEqual([
      {
        account_id: ACCOUNT,
        proxy_id: "proxy-1",
        asks: [
          {
            counter: {
              dimension_kind: "user",
              dimension_id: "u1",
              window_seconds: 3600,
              window_start: HOUR_START,
            },
            cap_tokens: 1_000,
            committed: { tokens: 0, cost_nanos: 0, calls: 0 },
            need: { tokens: 100, cost_nanos: 0, calls: 0 },
          },
        ],
      },
    ]);
  });

  it("holds from a lease with room without asking, and names the lease in the counters it counts on", async () => {
    const { leader, held, holdFromLeases } = setup();
    await held(100);
    // Granted 100 + 500 spare: 500 more fit, 501 do not.
    const hold = holdFromLeases(500);
    expect(hold?.counters).toEqual([{ ...reservedOf(KEY), lease_id: "lease-1" }]);
    expect(holdFromLeases(1)).toBeUndefined();
    expect(leader.requests).toHaveLength(1);
  });

  it("leases nothing for a counter without a cap, but still counts on it", async () => {
    const { leader, held } = setup();
    const uncapped = {
      ...planOf({ ...KEY, dimension_kind: "group", dimension_id: "g1" }),
      capTokens: undefined,
    };
    const hold = await held(100, [planOf(), uncapped]);
    expect(hold.counters).toEqual([{ ...reservedOf(KEY), lease_id: "lease-1" }, reservedOf(uncapped.key)]);
    expect(leader.asks).toHaveLength(1);
  });

  it("holds no lease where the request adds nothing capped: a model call on a counter only tool calls cap", async () => {
    const { leader, table } = setup();
    leader.silent = true;
    const callsOnly = { ...planOf(), capTokens: undefined, capCalls: 5 };
    const admission = await table.admit(ACCOUNT, [callsOnly], tokens(100));
    expect(admission).toMatchObject({ kind: "held", hold: { counters: [reservedOf(KEY)] } });
    expect(leader.requests).toEqual([]);
    // A tool call on it asks: it adds one call.
    expect(table.holdFromLeases([callsOnly], { tokens: 0, costNanos: 0, calls: 1 })).toBeUndefined();
  });

  it("answers a burst with one ask: requests queued behind an ask whose grant covers them send none", async () => {
    const { leader, admit } = setup();
    const admissions = await Promise.all(Array.from({ length: 5 }, () => admit(100)));
    expect(admissions.every((admission) => admission.kind === "held")).toBe(true);
    expect(leader.requests).toHaveLength(1);
  });

  it("refuses what the leader refuses, with the usage the leader says is settled", async () => {
    const { leader, admit } = setup();
    leader.used = 950;
    const admission = await admit(100);
    expect(admission).toMatchObject({ kind: "refused", plan: { id: chainId(KEY) }, used: tokens(950) });
  });

  it("holds on a second grant that fits, after real usage beyond a hold took the first one", async () => {
    const { table, leader, held, admit } = setup();
    leader.spare = 0;
    const running = await held(100);
    const answer = leader.answerLater();
    const admitting = admit(500);
    await settle();
    // While the ask for 500 travels, a request ends having used 200 more than it held.
    table.finish(running, tokens(300));
    answer();
    expect(await admitting).toMatchObject({ kind: "held", hold: { amount: tokens(500) } });
    expect(leader.asks.map((ask) => ask.committed.tokens)).toEqual([0, 100, 300]);
  });

  it("is unavailable when the leader does not answer while the bus does", async () => {
    const { leader, admit } = setup();
    leader.silent = true;
    expect(await admit(100)).toEqual({ kind: "unavailable" });
  });

  it("gives back at once what a finished request did not use", async () => {
    const { leader, table, held, holdFromLeases } = setup();
    leader.spare = 0;
    const hold = await held(600);
    expect(holdFromLeases(1)).toBeUndefined();
    table.finish(hold, tokens(10));
    // 10 used of the 600 granted: 590 fit again, without an ask.
    expect(holdFromLeases(590)).toBeDefined();
    expect(leader.requests).toHaveLength(1);
  });

  it("counts real usage beyond the hold on the lease", async () => {
    const { table, held, admit, leader } = setup();
    const hold = await held(100);
    table.finish(hold, tokens(300));
    await admit(400);
    expect(leader.lastAsk).toMatchObject({ committed: { tokens: 300 }, need: { tokens: 400 } });
  });
});

describe("LeaseTable: extending a hold", () => {
  it("extends a hold within its lease's grant without asking", async () => {
    const { table, leader, held } = setup();
    const hold = await held(100);
    expect(await table.extend(ACCOUNT, hold, [planOf()], tokens(400))).toMatchObject({
      kind: "held",
      hold: { amount: tokens(500) },
    });
    expect(leader.requests).toHaveLength(1);
  });

  it("asks for what an extension lacks, naming what the lease has committed", async () => {
    const { table, leader, held } = setup();
    const hold = await held(100);
    const extended = await table.extend(ACCOUNT, hold, [planOf()], tokens(600));
    expect(extended).toMatchObject({ kind: "held", hold: { amount: tokens(700) } });
    expect(leader.lastAsk).toMatchObject({
      counter: { lease_id: "lease-1" },
      committed: { tokens: 100 },
      need: { tokens: 600 },
    });
  });

  it("refuses an extension the leader refuses, and leaves the hold as it was", async () => {
    const { table, held } = setup();
    const hold = await held(100);
    expect(await table.extend(ACCOUNT, hold, [planOf()], tokens(1_000))).toMatchObject({ kind: "refused" });
    expect(hold.amount).toEqual(tokens(100));
  });

  it("cannot grow a hold on a lease the leader replaced", async () => {
    const { table, leader, held, admit } = setup();
    const hold = await held(100);
    leader.forgetLeases();
    // Another request lacks room: the leader answers with a new lease, which replaces the old one.
    await admit(600);
    expect(await table.extend(ACCOUNT, hold, [planOf()], tokens(600))).toEqual({ kind: "unavailable" });
  });
});

describe("LeaseTable: renewals and lapses (maintain)", () => {
  it("renews a lease in use once half its TTL is gone, asking for nothing", async () => {
    const { clock, table, leader, held, holdFromLeases } = setup();
    await held(100);
    clock.advance(TTL_MS / 2 - 1);
    holdFromLeases(10);
    await table.maintain();
    expect(leader.requests).toHaveLength(1);
    clock.advance(2);
    await table.maintain();
    expect(leader.lastAsk).toMatchObject({
      counter: { lease_id: "lease-1" },
      committed: { tokens: 110 },
      need: { tokens: 0 },
    });
  });

  it("renews a lease in use once less than a quarter of its grant is left", async () => {
    const { table, leader, held, holdFromLeases } = setup();
    await held(100);
    // 600 granted: 451 committed leaves less than 150.
    holdFromLeases(351);
    await table.maintain();
    expect(leader.requests).toHaveLength(2);
    expect(leader.lastAsk).toMatchObject({ committed: { tokens: 451 }, need: { tokens: 0 } });
  });

  it("shrinks a lease idle for idleMs to what it committed, admitting nothing beyond from then on", async () => {
    const { clock, table, leader, held, holdFromLeases } = setup();
    const hold = await held(100);
    table.finish(hold, tokens(40));
    clock.advance(IDLE_MS);
    await table.maintain();
    expect(leader.lastAsk).toMatchObject({ committed: { tokens: 40 }, need: { tokens: 0 }, shrink: true });
    expect(holdFromLeases(1)).toBeUndefined();
  });

  it("does not shrink a lease a request waits to hold on while it asks for another counter", async () => {
    const { clock, table, leader, held, admit } = setup();
    const other = planOf({ ...KEY, dimension_kind: "group", dimension_id: "g1" });
    table.finish(await held(100), tokens(40));
    const answer = leader.answerLater();
    const admitting = admit(100, [planOf(), other]);
    await settle();
    clock.advance(IDLE_MS);
    const maintaining = table.maintain();
    answer();
    await maintaining;
    expect(await admitting).toMatchObject({ kind: "held" });
    expect(leader.asks.filter((ask) => ask.shrink)).toEqual([]);
  });

  it("keeps a lease a request holds on alive however long the request runs: shrunk when idle, renewed near its TTL", async () => {
    const { clock, table, leader, held, holdFromLeases } = setup();
    const running = await held(100);
    for (let tick = 0; tick < 40; tick++) {
      clock.advance(500);
      await table.maintain();
    }
    expect(leader.lastAsk).toMatchObject({ counter: { lease_id: "lease-1" }, committed: { tokens: 100 } });
    table.finish(running, tokens(40));
    // The lease still holds what the request did not use: the leader never freed it.
    expect(holdFromLeases(60)).toBeDefined();
    expect(holdFromLeases(1)).toBeUndefined();
  });

  it("keeps a lease alive while a finished request's event is not in the stream, and lets it go once it is", async () => {
    const { clock, table, leader, held } = setup();
    const hold = await held(100);
    table.finish(hold, tokens(40));
    const stored = table.untilStored(hold);
    for (let tick = 0; tick < 40; tick++) {
      clock.advance(500);
      await table.maintain();
    }
    expect(leader.lastAsk).toMatchObject({
      counter: { lease_id: "lease-1" },
      committed: { tokens: 40 },
      shrink: true,
    });
    const asked = leader.requests.length;
    stored();
    stored();
    clock.advance(TTL_MS);
    await table.maintain();
    expect(leader.requests).toHaveLength(asked);
  });

  it("asks again for a lease that ran out with an event still unsent, instead of forgetting it", async () => {
    const { clock, table, leader, held } = setup();
    const hold = await held(100);
    table.finish(hold, tokens(40));
    table.untilStored(hold);
    // Its renewals went unanswered (a leader between terms): it ran out.
    clock.advance(TTL_MS);
    await table.maintain();
    expect(leader.lastAsk).toMatchObject({ counter: { lease_id: "lease-1" }, committed: { tokens: 40 } });
    expect(leader.lastAsk?.shrink).toBeUndefined();
  });

  it("keeps a lapsed lease while an ask on it is in flight: its grant renews the lease the request holds on", async () => {
    const { clock, table, leader, held, admit } = setup();
    await held(100);
    clock.advance(TTL_MS);
    const answer = leader.answerLater();
    const admitting = admit(100);
    await settle();
    const maintaining = table.maintain();
    await settle();
    answer();
    await maintaining;
    expect(await admitting).toMatchObject({ kind: "held", hold: { counters: [{ lease_id: "lease-1" }] } });
    expect(leader.asks.map((ask) => ask.counter.lease_id)).toEqual([undefined, "lease-1"]);
  });

  it("lets a lease lapse with its TTL, and forgets it once the bus answers: the next ask starts a new one", async () => {
    const { clock, table, leader, held, holdFromLeases } = setup();
    table.finish(await held(100), tokens(100));
    clock.advance(TTL_MS);
    expect(holdFromLeases(1)).toBeUndefined();
    await table.maintain();
    await held(100);
    expect(leader.lastAsk?.counter.lease_id).toBeUndefined();
  });

  it("keeps a lapsed lease while the bus is silent: it is what the proxy rides an outage on", async () => {
    const { clock, table, bus, leader, held, holdFromLeases } = setup();
    table.finish(await held(100), tokens(100));
    clock.advance(TTL_MS);
    bus.silent = true;
    const maintaining = table.maintain();
    table.busLost();
    await maintaining;
    expect(holdFromLeases(100)).toBeDefined();
    expect(leader.requests).toHaveLength(1);
  });

  it("leases the next window ahead when a lease in use ends its window within the outage grace", async () => {
    const { clock, table, leader, held } = setup();
    clock.now = (HOUR_START + 3600) * 1000 - OUTAGE_GRACE_MS;
    await held(100);
    await table.maintain();
    expect(leader.lastAsk).toMatchObject({
      counter: { window_start: HOUR_START + 3600 },
      committed: { tokens: 0 },
      need: { tokens: 0 },
    });
  });
});

describe("LeaseTable: bus outages", () => {
  it("keeps a lease usable until outageGraceMs after the leader last confirmed it while the bus is lost", async () => {
    const { clock, table, held, holdFromLeases } = setup();
    await held(100);
    table.busLost();
    clock.advance(OUTAGE_GRACE_MS - 1);
    expect(holdFromLeases(100)).toBeDefined();
    clock.advance(1);
    expect(holdFromLeases(1)).toBeUndefined();
  });

  it("sends no ask while the connection is lost: what the leases lack is unavailable", async () => {
    const { table, leader, held, admit } = setup();
    await held(100);
    table.busLost();
    expect(await admit(600)).toEqual({ kind: "unavailable" });
    expect(leader.requests).toHaveLength(1);
  });

  it("puts leases back on their TTL at the leader's first answer after the outage", async () => {
    const { clock, table, held, holdFromLeases } = setup();
    await held(100);
    table.busLost();
    clock.advance(TTL_MS);
    table.busReconnected();
    await held(600);
    clock.advance(TTL_MS);
    expect(holdFromLeases(1)).toBeUndefined();
  });

  it("holds on a lapsed lease's outage grace when its ask went unanswered and the bus turns out lost", async () => {
    const { clock, table, bus, leader, held, admit } = setup();
    await held(100);
    clock.advance(TTL_MS);
    leader.silent = true;
    bus.silent = true;
    const admitting = admit(100);
    await settle();
    // The ask went unanswered: the table PINGs the bus, and waits for its verdict.
    expect(bus.pings).toBe(1);
    table.busLost();
    expect(await admitting).toMatchObject({ kind: "held" });
  });
});

describe("LeaseTable: a new leader's census", () => {
  it("ends the leases it holds, the outage it rides on them included: what they lack is asked of the new leader", async () => {
    const { clock, table, leader, held, holdFromLeases } = setup();
    await held(100);
    table.busLost();
    clock.advance(TTL_MS + 1_000);
    table.busReconnected();
    expect(holdFromLeases(1)).toBeDefined();
    table.census();
    expect(holdFromLeases(1)).toBeUndefined();
    clock.advance(1);
    await held(100);
    expect(leader.requests).toHaveLength(2);
  });

  it("counts the holds still open on the leases it ended, until their requests finish", async () => {
    const { table, held } = setup();
    const first = await held(100);
    const second = await held(100);
    expect(table.census()).toBe(2);
    table.finish(first, tokens(40));
    expect(table.census()).toBe(1);
    table.finish(second, tokens(40));
    expect(table.census()).toBe(0);
  });

  it("counts a hold on a lease an earlier census ended, once a new leader's lease replaced it too", async () => {
    const { clock, table, leader, held } = setup();
    const before = await held(100);
    expect(table.census()).toBe(1);
    clock.advance(1);
    leader.forgetLeases();
    const after = await held(100);
    expect(after.counters[0]?.lease_id).not.toBe(before.counters[0]?.lease_id);
    table.finish(after, tokens(40));
    expect(answerCensus(table, "proxy-1", () => 3)).toEqual({
      v: 1,
      proxy_id: "proxy-1",
      events_pending: 3,
      holds_open: 1,
    });
    table.finish(before, tokens(40));
    expect(table.census()).toBe(0);
  });

  it("rides no later outage on a lease it held at the census", async () => {
    const { table, held, holdFromLeases } = setup();
    await held(100);
    table.census();
    table.busLost();
    expect(holdFromLeases(1)).toBeUndefined();
  });

  it("does not admit on a grant asked for before the census, answered after it", async () => {
    const { clock, table, leader, held, admit, holdFromLeases } = setup();
    await held(100);
    const answer = leader.answerLater();
    const admitting = admit(600);
    await settle();
    table.census();
    clock.advance(1);
    leader.answerAfter = undefined;
    answer();
    expect(await admitting).toMatchObject({ kind: "held" });
    // The hold came from a second ask, sent after the census.
    expect(leader.requests).toHaveLength(3);
    expect(holdFromLeases(1)).toBeDefined();
  });

  it("rides outages as before on grants asked for after it", async () => {
    const { clock, table, held, holdFromLeases } = setup();
    table.census();
    clock.advance(1);
    await held(100);
    clock.advance(TTL_MS);
    table.busLost();
    expect(holdFromLeases(1)).toBeDefined();
  });
});

const reservedOf = ({ dimension_kind, dimension_id, window_seconds, window_start }: CounterKey) => ({
  dimension_kind,
  dimension_id,
  window_seconds,
  window_start,
});

describe("LeaseTable: headroom held elsewhere", () => {
  it("refused while settled usage leaves room, asks again after a pause, and holds once others gave it back", async () => {
    const { leader, admit } = setup();
    leader.heldByOthers = 950;
    const admitting = admit(100);
    await settle();
    expect(leader.requests).toHaveLength(1);
    leader.heldByOthers = 0;
    expect(await admitting).toMatchObject({ kind: "held" });
    expect(leader.requests).toHaveLength(2);
  });

  it("refuses after its last ask when the room stays held", async () => {
    const { leader, admit } = setup();
    leader.heldByOthers = 950;
    expect(await admit(100)).toMatchObject({ kind: "refused", used: tokens(0) });
    expect(leader.requests).toHaveLength(1 + HELD_RETRY_DELAYS_MS.length);
  });

  it("does not ask again when settled usage leaves no room (the cap is full)", async () => {
    const { leader, admit } = setup();
    leader.used = 950;
    expect(await admit(100)).toMatchObject({ kind: "refused" });
    expect(leader.requests).toHaveLength(1);
  });

  it("gives back what no request committed on the counters the leader reclaims", async () => {
    const { leader, table, held, holdFromLeases } = setup();
    await held(100);
    await table.reclaim(["another-counter"]);
    expect(leader.requests).toHaveLength(1);
    await table.reclaim([chainId(KEY)]);
    expect(leader.lastAsk).toMatchObject({ shrink: true, committed: { tokens: 100 } });
    expect(holdFromLeases(1)).toBeUndefined();
  });
});
