import { request } from "@agentnet/bus";
import { Consumption, type ReserveReply } from "@agentnet/contracts";
import { uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callerOf,
  makeLimits,
  makeReserve,
  makeRule,
  type Replica,
  reserve,
  startReplica,
  TestClock,
} from "./test-support";

const clock = new TestClock();
let one: Replica;
let two: Replica;
beforeAll(async () => {
  const durable = uniqueId("consumption");
  one = await startReplica("agentnet_test_consumption_reserve", clock, { durable });
  two = await startReplica("agentnet_test_consumption_reserve", clock, { durable });
});
afterAll(async () => {
  await one?.stop();
  await two?.stop();
});

const allowed = (replies: ReserveReply[]) => replies.filter((reply) => reply.decision === "allow").length;
const tokenCap = (user_cap: number, group_cap = 0, window_seconds = 3600) =>
  makeLimits({ token_limit: { enabled: true, user_cap, group_cap, window_seconds } });

describe("reservations at a cap boundary", () => {
  it("admits exactly what a user cap allows out of 50 concurrent requests (0 overshoot)", async () => {
    // Cap 1,000 tokens, estimate 100 each: exactly 10 fit.
    const base = makeReserve();
    const body = { ...base, policy: { ...base.policy, limits: tokenCap(1000) } };
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => reserve(one.nc, { ...body, request_id: uniqueId("req") })),
    );
    expect(allowed(replies)).toBe(10);
    expect(replies.find((reply) => reply.decision === "deny")).toMatchObject({
      reason: "llm_policy.token_cap_exceeded",
      limit_source_id: base.policy.id,
      dimension_kind: "user",
      dimension_id: base.user_id,
    });
  });

  it("admits no more than a group cap across 50 members served by two replicas", async () => {
    const base = makeReserve();
    const group = base.group_ids[0] ?? "";
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        reserve(i % 2 === 0 ? one.nc : two.nc, {
          ...base,
          request_id: uniqueId("req"),
          user_id: uniqueId("member"),
          policy: { ...base.policy, limits: tokenCap(0, 1000) },
        }),
      ),
    );
    expect(allowed(replies)).toBe(10);
    const deny = replies.find((reply) => reply.decision === "deny");
    expect(deny).toMatchObject({ dimension_kind: "group", dimension_id: group });
  });

  it("admits exactly the cap when user and group caps bind together across replicas", async () => {
    // Two counters per request, taken in one order by everyone, so racers cannot starve each other.
    const base = makeReserve();
    const body = { ...base, policy: { ...base.policy, limits: tokenCap(700, 700) } };
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        reserve(i % 2 === 0 ? one.nc : two.nc, { ...body, request_id: uniqueId("req") }),
      ),
    );
    expect(allowed(replies)).toBe(7);
  });
});

describe("cap decisions", () => {
  it("allows without a reservation when no limit is in force, and ignores disabled limits", async () => {
    const disabled = makeLimits({ token_limit: { enabled: false, user_cap: 1 } });
    const base = makeReserve({ budget_rules: [makeRule({ limits: disabled })] });
    const reply = await reserve(one.nc, { ...base, policy: { ...base.policy, limits: disabled } });
    expect(reply).toEqual({ decision: "allow" });
  });

  it("treats 0 as uncapped but still reserves (the counter counts)", async () => {
    const base = makeReserve({ estimate: { input_tokens: 10 ** 9, output_tokens: 0, cost_usd: 10 ** 6 } });
    const limits = makeLimits({
      token_limit: { enabled: true, user_cap: 0, group_cap: 0 },
      budget_limit: { enabled: true, user_cap_usd: 0, group_cap_usd: 0 },
    });
    const reply = await reserve(one.nc, { ...base, policy: { ...base.policy, limits } });
    expect(reply).toMatchObject({ decision: "allow", reservation_id: expect.any(String) });
  });

  it("denies an estimate above the cap outright and says when the window resets", async () => {
    clock.now = Date.UTC(2031, 0, 1, 12, 15, 0);
    const base = makeReserve();
    const reply = await reserve(one.nc, { ...base, policy: { ...base.policy, limits: tokenCap(99) } });
    // The 3,600 s window started at 12:00, so it starts over in 45 minutes.
    expect(reply).toMatchObject({ decision: "deny", retry_after_seconds: 45 * 60 });
  });

  it("resets at the epoch-aligned window boundary", async () => {
    clock.now = Date.UTC(2031, 0, 1, 13, 0, 50);
    const base = makeReserve();
    const body = { ...base, policy: { ...base.policy, limits: tokenCap(100, 0, 60) } };
    expect((await reserve(one.nc, { ...body, request_id: uniqueId("r") })).decision).toBe("allow");
    const denied = await reserve(one.nc, { ...body, request_id: uniqueId("r") });
    expect(denied).toMatchObject({ decision: "deny", retry_after_seconds: 10 });
    clock.advance(10_000);
    expect((await reserve(one.nc, { ...body, request_id: uniqueId("r") })).decision).toBe("allow");
  });

  it("caps USD with budget_limit and reports the budget reason", async () => {
    const base = makeReserve({ estimate: { input_tokens: 1, output_tokens: 1, cost_usd: 0.4 } });
    const limits = makeLimits({ budget_limit: { enabled: true, user_cap_usd: 1, group_cap_usd: 0 } });
    const body = { ...base, policy: { ...base.policy, limits } };
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await reserve(one.nc, { ...body, request_id: uniqueId("r") }));
    expect(replies.map((reply) => reply.decision)).toEqual(["allow", "allow", "deny"]);
    expect(replies[2]).toMatchObject({ reason: "llm_policy.budget_cap_exceeded" });
  });

  it("applies account-wide, user-targeted and group-targeted rules, each with its own reason", async () => {
    const base = makeReserve();
    const [group = ""] = base.group_ids;
    const cases = [
      { rule: makeRule({ limits: tokenCap(100) }), kind: "user" },
      { rule: makeRule({ target_users: [base.user_id], limits: tokenCap(100) }), kind: "user" },
      { rule: makeRule({ target_groups: [group], limits: tokenCap(0, 100) }), kind: "group" },
    ];
    for (const { rule, kind } of cases) {
      const body = { ...base, account_id: uniqueId("acc"), budget_rules: [rule] };
      expect((await reserve(one.nc, { ...body, request_id: uniqueId("r") })).decision).toBe("allow");
      expect(await reserve(one.nc, { ...body, request_id: uniqueId("r") })).toMatchObject({
        decision: "deny",
        reason: "budget_rule.token_cap_exceeded",
        limit_source_id: rule.id,
        dimension_kind: kind,
      });
    }
  });

  it("ignores rules that target other users or groups, and disabled rules", async () => {
    const base = makeReserve();
    const rules = [
      makeRule({ target_users: ["someone-else"], limits: tokenCap(1) }),
      makeRule({ target_groups: ["other-group"], limits: tokenCap(1, 1) }),
      makeRule({ enabled: false, limits: tokenCap(1) }),
    ];
    expect(await reserve(one.nc, { ...base, budget_rules: rules })).toEqual({ decision: "allow" });
  });

  it("enforces several rules on one user: the tightest fires", async () => {
    const base = makeReserve();
    const loose = makeRule({ limits: tokenCap(1000) });
    const tight = makeRule({ target_users: [base.user_id], limits: tokenCap(150) });
    const body = { ...base, budget_rules: [loose, tight] };
    expect((await reserve(one.nc, { ...body, request_id: uniqueId("r") })).decision).toBe("allow");
    expect(await reserve(one.nc, { ...body, request_id: uniqueId("r") })).toMatchObject({
      decision: "deny",
      limit_source_id: tight.id,
    });
  });

  it("counts a group cap across all members, and a user cap per user", async () => {
    const base = makeReserve();
    const body = { ...base, policy: { ...base.policy, limits: tokenCap(100, 300) } };
    const alice = { ...body, user_id: uniqueId("alice") };
    const bob = { ...body, user_id: uniqueId("bob") };
    expect((await reserve(one.nc, { ...alice, request_id: uniqueId("r") })).decision).toBe("allow");
    expect(await reserve(one.nc, { ...alice, request_id: uniqueId("r") })).toMatchObject({
      dimension_kind: "user",
    });
    expect((await reserve(one.nc, { ...bob, request_id: uniqueId("r") })).decision).toBe("allow");
    const carol = { ...body, user_id: uniqueId("carol") };
    expect((await reserve(one.nc, { ...carol, request_id: uniqueId("r") })).decision).toBe("allow");
    const dave = { ...body, user_id: uniqueId("dave") };
    expect(await reserve(one.nc, { ...dave, request_id: uniqueId("r") })).toMatchObject({
      decision: "deny",
      dimension_kind: "group",
    });
  });

  it("answers a retried reserve of the same request with the first reservation", async () => {
    const base = makeReserve();
    const body = { ...base, policy: { ...base.policy, limits: tokenCap(1000) } };
    const first = await reserve(one.nc, body);
    const again = await reserve(two.nc, body);
    expect(again).toEqual(first);
    const list = await request(one.nc, Consumption.list, { caller: callerOf(base) });
    expect(list).toEqual([]);
  });
});
