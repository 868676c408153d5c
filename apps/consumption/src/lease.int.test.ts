import type { Admission, LeaseTable } from "@agentnet/caps";
import { uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  admit,
  held,
  makeLimits,
  makeRule,
  makeScope,
  proxyOn,
  type Replica,
  type Scope,
  startReplica,
  TestClock,
} from "./test-support";

const clock = new TestClock();
let one: Replica;
let two: Replica;
beforeAll(async () => {
  const durable = uniqueId("consumption");
  one = await startReplica("agentnet_test_consumption_lease", clock, { durable });
  two = await startReplica("agentnet_test_consumption_lease", clock, { durable });
});
afterAll(async () => {
  await one?.stop();
  await two?.stop();
});

const admitted = (admissions: Admission[]) => admissions.filter((a) => a.kind === "held").length;
const tokenCap = (user_cap: number, group_cap = 0, window_seconds = 3600) =>
  makeLimits({ token_limit: { enabled: true, user_cap, group_cap, window_seconds } });
const capped = (limits: ReturnType<typeof makeLimits>, overrides: Partial<Scope> = {}): Scope => {
  const base = makeScope(overrides);
  return { ...base, policy: { ...base.policy, limits } };
};

/** Two proxies, each asking the leader over its own replica's connection. */
const twoProxies = (): [LeaseTable, LeaseTable] => [proxyOn(one.nc, clock), proxyOn(two.nc, clock)];

describe("leases at a cap boundary (0 overshoot)", () => {
  it("admits no more than a user cap allows out of 50 concurrent requests over two proxies", async () => {
    // Cap 1,000 tokens, 100 each: at most 10 fit, whichever proxy admits them.
    const proxies = twoProxies();
    const scope = capped(tokenCap(1000));
    const admissions = await Promise.all(
      Array.from({ length: 50 }, (_, i) => admit(proxies[i % 2] as LeaseTable, scope, clock)),
    );
    expect(admitted(admissions)).toBeLessThanOrEqual(10);
    // Headroom split between two leases can strand less than one request's worth in each.
    expect(admitted(admissions)).toBeGreaterThanOrEqual(8);
    expect(admissions.find((a) => a.kind === "refused")).toMatchObject({
      kind: "refused",
      plan: { key: { dimension_kind: "user", dimension_id: scope.user_id } },
    });
  });

  it("admits no more than a group cap across 50 members over two proxies", async () => {
    const proxies = twoProxies();
    const base = capped(tokenCap(0, 1000));
    const admissions = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        admit(proxies[i % 2] as LeaseTable, { ...base, user_id: uniqueId("member") }, clock),
      ),
    );
    expect(admitted(admissions)).toBeLessThanOrEqual(10);
    expect(admitted(admissions)).toBeGreaterThanOrEqual(8);
  });

  it("admits no more than the cap when user and group caps bind together", async () => {
    const proxies = twoProxies();
    const scope = capped(tokenCap(700, 700));
    const admissions = await Promise.all(
      Array.from({ length: 50 }, (_, i) => admit(proxies[i % 2] as LeaseTable, scope, clock)),
    );
    expect(admitted(admissions)).toBeLessThanOrEqual(7);
    expect(admitted(admissions)).toBeGreaterThanOrEqual(5);
  });

  it("caps USD the same way", async () => {
    const proxy = proxyOn(one.nc, clock);
    const scope = capped(makeLimits({ budget_limit: { enabled: true, user_cap_usd: 1, group_cap_usd: 0 } }));
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await admit(proxy, scope, clock, 2, 0.4)).kind);
    expect(results).toEqual(["held", "held", "refused"]);
  });
});

describe("holds end with the answer", () => {
  it("never refuses back-to-back requests whose real use fits the cap", async () => {
    // Token cap 300, each request holds 100 and really uses 10: twenty in a row fit.
    const proxy = proxyOn(one.nc, clock);
    const scope = capped(tokenCap(300));
    for (let i = 0; i < 20; i++) {
      const hold = await held(proxy, scope, clock);
      proxy.finish(hold, { tokens: 10, costNanos: 0, calls: 0 });
    }
    expect((await admit(proxy, scope, clock, 110)).kind).toBe("refused");
  });

  it("answers a burst on a lease with nothing granted yet with one ask, not one per request", async () => {
    let asks = 0;
    const proxy = proxyOn(one.nc, clock, 2_000, () => asks++);
    const scope = capped(tokenCap(1_000_000));
    const admissions = await Promise.all(Array.from({ length: 50 }, () => admit(proxy, scope, clock)));
    expect(admitted(admissions)).toBe(50);
    // The first ask's grant covers the others, which waited for it instead of asking in turn.
    expect(asks).toBe(1);
  });

  it("gives a stopped proxy's headroom back once its lease expires", async () => {
    const gone = proxyOn(one.nc, clock);
    const scope = capped(tokenCap(1000));
    await held(gone, scope, clock, 900);
    const other = proxyOn(two.nc, clock);
    expect((await admit(other, scope, clock, 200)).kind).toBe("refused");
    clock.advance(6_000);
    await (one.service.isLeader() ? one : two).service.sweepExpired();
    expect((await admit(other, scope, clock, 200)).kind).toBe("held");
  });

  it("gives an idle proxy's spare headroom to another proxy when it shrinks", async () => {
    const first = proxyOn(one.nc, clock, 0);
    const scope = capped(tokenCap(1000));
    const hold = await held(first, scope, clock, 100);
    first.finish(hold, { tokens: 100, costNanos: 0, calls: 0 });
    const second = proxyOn(two.nc, clock);
    expect((await admit(second, scope, clock, 600)).kind).toBe("refused");
    await first.maintain();
    expect((await admit(second, scope, clock, 600)).kind).toBe("held");
  });
});

describe("which counters a request counts on", () => {
  it("leases nothing for uncapped limits (0) but still names their counters", async () => {
    const proxy = proxyOn(one.nc, clock);
    const limits = makeLimits({
      token_limit: { enabled: true, user_cap: 0, group_cap: 0 },
      budget_limit: { enabled: true, user_cap_usd: 0, group_cap_usd: 0 },
    });
    const hold = await held(proxy, capped(limits), clock, 10 ** 9);
    expect(hold.counters).toHaveLength(2);
    expect(hold.counters.every((counter) => counter.lease_id === undefined)).toBe(true);
  });

  it("counts nothing where no limit is in force (disabled limits and rules)", async () => {
    const proxy = proxyOn(one.nc, clock);
    const disabled = makeLimits({ token_limit: { enabled: false, user_cap: 1 } });
    const scope = capped(disabled, { budget_rules: [makeRule({ limits: disabled })] });
    expect(await admit(proxy, scope, clock)).toMatchObject({ kind: "held", hold: { counters: [] } });
  });

  it("starts over at the epoch-aligned window boundary", async () => {
    clock.now = Date.UTC(2031, 0, 1, 13, 0, 50);
    const proxy = proxyOn(one.nc, clock);
    const scope = capped(tokenCap(100, 0, 60));
    await held(proxy, scope, clock);
    expect((await admit(proxy, scope, clock)).kind).toBe("refused");
    clock.advance(10_000);
    expect((await admit(proxy, scope, clock)).kind).toBe("held");
  });
});
