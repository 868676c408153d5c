import { publishEvent, request } from "@agentnet/bus";
import { type AccountDeletedEvent, Consumption, type ConsumptionCounter, Events } from "@agentnet/contracts";
import { eventually, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  admit,
  callerOf,
  eventFor,
  held,
  makeCapped,
  proxyOn,
  publish,
  type Replica,
  type Scope,
  startReplica,
  TestClock,
} from "./test-support";

const DB = "agentnet_test_consumption_settle";
const clock = new TestClock();
let one: Replica;
let two: Replica;
beforeAll(async () => {
  const durable = uniqueId("consumption");
  one = await startReplica(DB, clock, { durable });
  two = await startReplica(DB, clock, { durable });
});
afterAll(async () => {
  await one?.stop();
  await two?.stop();
});

const list = (body: Scope, role: "owner" | "user" = "owner") =>
  request(one.nc, Consumption.list, { caller: callerOf(body, role) });
const userCounter = async (body: Scope): Promise<ConsumptionCounter | undefined> =>
  (await list(body)).find((counter) => counter.dimension_kind === "user");
const proxy = () => proxyOn(one.nc, clock);
const reservedByOne = (body: Scope) => held(proxy(), body, clock);

describe("settlement from JetStream events", () => {
  it("lists [] before anything is consumed, then the real usage of user and group", async () => {
    const body = makeCapped(1000, 5000);
    expect(await list(body)).toEqual([]);
    const reservation = await reservedByOne(body);
    await publish(one.nc, eventFor(body, reservation));
    await eventually(async () => (await list(body)).length === 2);
    const counters = await list(body);
    expect(counters.map((c) => c.dimension_kind).sort()).toEqual(["group", "user"]);
    for (const counter of counters) {
      expect(counter).toMatchObject({ tokens_input: 30, tokens_output: 20, cost_usd: 0.0005 });
      expect(counter).toMatchObject({ window_seconds: 3600, window_start_utc: "2031-01-01T10:00:00.000Z" });
    }
  });

  it("moves settled usage out of the proxy's lease: the counter's cap sees it once", async () => {
    const body = makeCapped(150);
    const table = proxy();
    const hold = await held(table, body, clock);
    table.finish(hold, { tokens: 50, costNanos: 500_000, calls: 0 });
    await publish(one.nc, eventFor(body, hold, { id: uniqueId("ev") }));
    await eventually(async () => (await userCounter(body))?.tokens_input === 30);
    // 50 settled; the lease still covers the rest, so 100 more fit and then nothing.
    expect((await admit(table, body, clock)).kind).toBe("held");
    expect((await admit(table, body, clock, 1)).kind).toBe("refused");
  });

  it("counts nothing for a denied or failed request", async () => {
    const body = makeCapped(100);
    const denied = await reservedByOne({ ...body, request_id: uniqueId("r") });
    const failed = { id: uniqueId("ev"), status_code: 502, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
    await one.service.settleEvents([
      eventFor(body, denied, {
        id: uniqueId("ev"),
        decision: "deny",
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: 0,
      }),
      eventFor(body, denied, failed),
    ]);
    expect(await list(body)).toEqual([]);
  });

  it("counts a redelivered event once (duplicate publish and a replay after a crash)", async () => {
    const body = makeCapped(10_000);
    const reservation = await reservedByOne(body);
    const event = eventFor(body, reservation);
    // Settled in process without an ack, as if the replica died before acking...
    await one.service.settleEvents([event]);
    // ...then delivered again through JetStream, twice (a different Nats-Msg-Id defeats dedup).
    await publish(one.nc, event, uniqueId("msg"));
    await publish(one.nc, event, uniqueId("msg"));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await userCounter(body)).toMatchObject({ tokens_input: 30, tokens_output: 20, cost_usd: 0.0005 });
  });

  it("counts every event exactly once with two replicas, one leading and one standing by", async () => {
    const base = makeCapped(0, 1_000_000);
    const users = Array.from({ length: 40 }, () => ({
      ...base,
      user_id: uniqueId("u"),
      request_id: uniqueId("r"),
    }));
    const reservations = await Promise.all(users.map(reservedByOne));
    await Promise.all(
      users.map((body, i) => publish(two.nc, eventFor(body, reservations[i] ?? { counters: [] }))),
    );
    const group = async () => (await list(base)).find((c) => c.dimension_kind === "group");
    await eventually(async () => (await group())?.tokens_input === 40 * 30, 20_000);
    expect(await group()).toMatchObject({ tokens_input: 1200, tokens_output: 800, cost_usd: 0.02 });
  });

  it("still counts an event whose lease expired", async () => {
    const body = makeCapped(100);
    const hold = await reservedByOne({ ...body, request_id: uniqueId("r") });
    clock.advance(60_000);
    expect(await one.service.sweepExpired()).toBeGreaterThanOrEqual(1);
    await one.service.settleEvents([eventFor(body, hold)]);
    await one.service.settleEvents([eventFor(body, hold)]);
    expect(await userCounter(body)).toMatchObject({ tokens_input: 30, tokens_output: 20 });
  });
});

describe("GET consumption order, scope and lifetime", () => {
  it("lists newest window first and scopes callers without the account-wide grant", async () => {
    const body = makeCapped(10_000, 10_000);
    const other = { ...body, user_id: uniqueId("other"), group_ids: [uniqueId("other-grp")] };
    for (const who of [body, other, body]) {
      const requestBody = { ...who, request_id: uniqueId("r") };
      await one.service.settleEvents([eventFor(requestBody, await reservedByOne(requestBody))]);
      clock.advance(3600 * 1000);
    }
    const all = await list(body);
    const starts = all.map((c) => c.window_start_utc);
    expect(starts).toEqual([...starts].sort().reverse());
    expect(all).toHaveLength(5); // body: user+group in two windows; other: its user only (not a source group)
    const own = await list(body, "user");
    expect(own).toHaveLength(4);
    expect(own.every((c) => c.dimension_id === body.user_id || c.dimension_id === body.group_ids[0])).toBe(
      true,
    );
  });

  it("prunes counters some time after their window ended", async () => {
    const body = makeCapped(10_000);
    await one.service.settleEvents([eventFor(body, await reservedByOne(body))]);
    expect(await list(body)).toHaveLength(2); // the user and its source group
    clock.advance(8 * 24 * 3600 * 1000);
    await one.service.prune();
    expect(await list(body)).toEqual([]);
  });

  it("deletes the account's counters on agn.account.deleted", async () => {
    const body = makeCapped(10_000);
    await one.service.settleEvents([eventFor(body, await reservedByOne(body))]);
    expect(await list(body)).toHaveLength(2); // the user and its source group
    const event: AccountDeletedEvent = {
      v: 1,
      account_id: body.account_id,
      deleted_at: new Date().toISOString(),
    };
    await publishEvent(one.nc, Events.accountDeleted, event, uniqueId("deleted"));
    await eventually(async () => (await list(body)).length === 0);
  });
});
