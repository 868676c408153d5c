import { request } from "@agentnet/bus";
import {
  type Caller,
  type GatewayRequestEvent,
  type RequestOf,
  Telemetry,
  type UsageBreakdown,
} from "@agentnet/contracts";
import { makeEvent } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

let stack: TelemetryStack;
beforeAll(async () => {
  stack = await startTelemetryStack();
});
afterAll(() => stack.stop());

const series = (caller: Caller, query: RequestOf<typeof Telemetry.usageSeries>["query"] = {}) =>
  request(stack.nc, Telemetry.usageSeries, { caller, query });
const breakdown = (caller: Caller, query: RequestOf<typeof Telemetry.usageBreakdown>["query"]) =>
  request(stack.nc, Telemetry.usageBreakdown, { caller, query });

/** A moment on 2025-03-<day> (UTC). */
const at = (day: number, hour: number, minute = 0, second = 0) =>
  new Date(Date.UTC(2025, 2, day, hour, minute, second)).toISOString();

const denied = (o: Partial<GatewayRequestEvent>) =>
  makeEvent({
    decision: "deny",
    deny_reason: "llm_policy.no_matching_policy",
    status_code: 403,
    duration_ms: 2,
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    cost_usd: 0,
    input_cost_usd: 0,
    output_cost_usd: 0,
    ...o,
  });

/** Events stored, then the hours before `rolledUntil` rolled: later ones stay in usage_events. */
const storeAndRoll = async (events: GatewayRequestEvent[], rolledUntil: string) => {
  await stack.publish(events);
  await stack.settle();
  // The roll takes hours that ended 10 minutes before the moment it is given.
  await stack.telemetry.rollHours(new Date(Date.parse(rolledUntil) + 10 * 60_000));
};

describe("usage series", () => {
  it("counts requests, errors and denials and estimates latency, across the rollup boundary", async () => {
    const { accountId, owner } = await stack.newAccount();
    const e = (timestamp: string, o: Partial<GatewayRequestEvent> = {}) =>
      makeEvent({ account_id: accountId, timestamp, logged: false, ...o });
    const events = [
      // 10:00: eleven allowed requests of 100 to 1,100 ms, the last answered 500 by the upstream.
      ...Array.from({ length: 11 }, (_, i) =>
        e(at(10, 10, i), { duration_ms: 100 * (i + 1), status_code: i === 10 ? 500 : 200 }),
      ),
      denied({ account_id: accountId, timestamp: at(10, 10, 30) }),
      // 11:00: nine allowed requests of 1,200 to 2,000 ms, and one denied.
      ...Array.from({ length: 9 }, (_, i) => e(at(10, 11, i), { duration_ms: 1200 + 100 * i })),
      denied({ account_id: accountId, timestamp: at(10, 11, 30) }),
      // 12:00, not rolled: an allowed request the upstream refused (429) and a slow one.
      e(at(10, 12, 20), { status_code: 429, duration_ms: 30 }),
      e(at(10, 12, 40), { duration_ms: 2100 }),
    ];
    await stack.publish(events);
    await stack.settle();
    const fromEvents = await series(owner, { granularity: "hour" });
    await stack.telemetry.rollHours(new Date(Date.parse(at(10, 12, 10))));
    for (const rollup of ["usage_hourly", "usage_hourly_totals"]) {
      const rolled = await stack.warehouse.query<{ hour: string }>(
        "SELECT DISTINCT hour FROM {rollup:Identifier} WHERE account_id = {a:String} ORDER BY hour",
        { rollup, a: accountId },
      );
      expect(
        rolled.map((row) => row.hour),
        rollup,
      ).toEqual(["2025-03-10 10:00:00", "2025-03-10 11:00:00"]);
    }

    const hours = await series(owner, { granularity: "hour" });
    expect(hours).toEqual(fromEvents);
    expect(hours).toEqual([
      {
        period_start: "2025-03-10T10:00:00Z",
        requests: 12,
        errors: 1,
        denied: 1,
        // Over the allowed requests only, errors included; the denied one was never timed upstream.
        latency_p50_ms: 600,
        latency_p95_ms: 1100,
        input_tokens: 1100,
        output_tokens: 550,
        total_tokens: 1650,
        cost_usd: 0.00825,
      },
      expect.objectContaining({
        period_start: "2025-03-10T11:00:00Z",
        requests: 10,
        errors: 0,
        denied: 1,
        latency_p50_ms: 1600,
        latency_p95_ms: 2000,
      }),
      expect.objectContaining({
        period_start: "2025-03-10T12:00:00Z",
        requests: 2,
        errors: 1,
        denied: 0,
        total_tokens: 300,
      }),
    ]);
    // One day: the rolled hours' latency states merged with the unrolled events' (22 allowed
    // requests: 30 ms, 100 to 2,000 ms, 2,100 ms).
    const [day] = await series(owner, { granularity: "day" });
    expect(day).toMatchObject({ requests: 24, errors: 2, denied: 2, total_tokens: 3300 });
    expect(day?.latency_p50_ms).toBeGreaterThanOrEqual(1000);
    expect(day?.latency_p50_ms).toBeLessThanOrEqual(1100);
    expect(day?.latency_p95_ms).toBeGreaterThanOrEqual(2000);
    expect(day?.latency_p95_ms).toBeLessThanOrEqual(2100);
    // A range starting inside the rolled 11:00 hour reads that hour from the events.
    const partial = await series(owner, { granularity: "hour", start_date: at(10, 11, 5) });
    expect(partial.map((b) => [b.period_start, b.requests, b.latency_p50_ms])).toEqual([
      ["2025-03-10T11:00:00Z", 5, 1800],
      ["2025-03-10T12:00:00Z", 2, expect.any(Number)],
    ]);
  });

  it("has no latency for a bucket of denied requests only, and applies the filters", async () => {
    const { accountId, owner } = await stack.newAccount();
    await storeAndRoll(
      [
        denied({ account_id: accountId, timestamp: at(11, 9), model: "o3" }),
        makeEvent({ account_id: accountId, timestamp: at(11, 10), model: "gpt-4o", duration_ms: 250 }),
      ],
      at(11, 12),
    );
    expect(await series(owner, { granularity: "hour" })).toEqual([
      expect.objectContaining({ requests: 1, denied: 1, latency_p50_ms: null, latency_p95_ms: null }),
      expect.objectContaining({ requests: 1, denied: 0, latency_p50_ms: 250, latency_p95_ms: 250 }),
    ]);
    const gpt = await series(owner, { granularity: "day", model: "gpt-4o" });
    expect(gpt.map((b) => [b.requests, b.latency_p50_ms])).toEqual([[1, 250]]);
  });
});

describe("usage breakdown", () => {
  it("sums requests, tokens and cost by user, group, model and provider, the most expensive first", async () => {
    const { accountId, owner } = await stack.newAccount();
    const e = (timestamp: string, o: Partial<GatewayRequestEvent>) =>
      makeEvent({ account_id: accountId, timestamp, logged: false, ...o });
    const ada = { user_id: "u-ada", group_ids: ["g-eng", "g-all"], resolved_provider_id: "p-openai" };
    const bob = { user_id: "u-bob", group_ids: ["g-all"], resolved_provider_id: "p-anthropic" };
    const events = [
      e(at(12, 9), { ...ada, model: "gpt-4o", total_tokens: 100, cost_usd: 0.01 }),
      e(at(12, 9, 5), { ...ada, model: "gpt-4o", total_tokens: 100, cost_usd: 0.01 }),
      e(at(12, 10), { ...bob, model: "claude", total_tokens: 1000, cost_usd: 0.05 }),
      // Not rolled.
      e(at(12, 13), { ...ada, model: "o3", total_tokens: 10, cost_usd: 0.1 }),
      denied({
        account_id: accountId,
        timestamp: at(12, 13, 5),
        ...bob,
        resolved_provider_id: "",
        model: "o3",
      }),
    ];
    await storeAndRoll(events, at(12, 12));

    const rows = async (by: "user" | "group" | "model" | "provider") => {
      const answer = await breakdown(owner, { by });
      expect(answer.truncated).toBe(false);
      return answer.data.map((row) => [row.key, row.requests, row.total_tokens, row.cost_usd]);
    };
    expect(await rows("user")).toEqual([
      ["u-ada", 3, 210, 0.12],
      ["u-bob", 2, 1000, 0.05],
    ]);
    // A request in two groups counts in both.
    expect(await rows("group")).toEqual([
      ["g-all", 5, 1210, 0.17],
      ["g-eng", 3, 210, 0.12],
    ]);
    expect(await rows("model")).toEqual([
      ["o3", 2, 10, 0.1],
      ["claude", 1, 1000, 0.05],
      ["gpt-4o", 2, 200, 0.02],
    ]);
    // The denied request was refused before a provider was chosen: its key is empty.
    expect(await rows("provider")).toEqual([
      ["p-openai", 3, 210, 0.12],
      ["p-anthropic", 1, 1000, 0.05],
      ["", 1, 0, 0],
    ]);
    const filtered = await breakdown(owner, { by: "model", group_id: "g-eng", end_date: at(12, 11) });
    expect(filtered.data.map((row) => [row.key, row.requests])).toEqual([["gpt-4o", 2]]);
  });

  it("answers the 100 most expensive rows and says when it cut the rest", async () => {
    const { accountId, owner } = await stack.newAccount();
    await stack.publish(
      Array.from({ length: 101 }, (_, i) =>
        makeEvent({ account_id: accountId, model: `m-${i}`, cost_usd: (i + 1) / 1000, logged: false }),
      ),
    );
    await stack.settle();
    const answer = await breakdown(owner, { by: "model" });
    expect(answer.truncated).toBe(true);
    expect(answer.data).toHaveLength(100);
    expect(answer.data[0]?.key).toBe("m-100");
    expect(answer.data.at(-1)?.key).toBe("m-1");
  });
});

describe("analytics of a member without the account-wide grant", () => {
  it("covers only their own requests, whatever user or group they ask for", async () => {
    const { accountId, owner } = await stack.newAccount();
    const member = (await stack.addMember(owner, "user")).caller;
    const mine = { user_id: member.user_id, group_ids: ["g-team"] };
    const theirs = { user_id: "u-other", group_ids: ["g-team", "g-ops"] };
    await stack.publish([
      makeEvent({ account_id: accountId, timestamp: at(13, 9), ...mine, duration_ms: 300 }),
      makeEvent({ account_id: accountId, timestamp: at(13, 9, 1), ...theirs }),
      makeEvent({ account_id: accountId, timestamp: at(13, 9, 2), ...theirs }),
    ]);
    await stack.settle();

    for (const query of [{}, { user_id: "u-other" }, { group_id: "g-ops" }]) {
      expect((await series(member, query)).map((b) => [b.requests, b.latency_p50_ms])).toEqual([[1, 300]]);
      expect((await breakdown(member, { by: "user", ...query })).data.map((row) => row.key)).toEqual([
        member.user_id,
      ]);
    }
    expect((await breakdown(member, { by: "group" })).data.map((row) => [row.key, row.requests])).toEqual([
      ["g-team", 1],
    ]);
    expect((await series(owner)).map((b) => b.requests)).toEqual([3]);
  });
});

describe("over HTTP", () => {
  it("answers both reads, and 400 with the reason for a dimension it does not break down by", async () => {
    const { accountId, token } = await stack.newAccount();
    await stack.publish([makeEvent({ account_id: accountId })]);
    await stack.settle();
    const base = "/api/agent-network/usage";

    const ok = await stack.http<unknown[]>(`${base}/series?granularity=hour`, token);
    expect(ok).toMatchObject({ status: 200, body: [{ period_start: "2025-03-10T12:00:00Z", requests: 1 }] });
    const split = await stack.http<UsageBreakdown>(`${base}/breakdown?by=provider`, token);
    expect(split).toEqual({
      status: 200,
      body: {
        data: [{ key: "prov_openai", requests: 1, total_tokens: 150, cost_usd: 0.00075 }],
        truncated: false,
      },
    });
    for (const path of [
      `${base}/breakdown?by=session`,
      `${base}/breakdown`,
      `${base}/series?granularity=year`,
    ]) {
      const refused = await stack.http<{ message: string; code: number; details: { path: string }[] }>(
        path,
        token,
      );
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 400, message: expect.any(String) });
      expect(refused.body.details.map((detail) => detail.path)).toEqual([
        path.includes("series") ? "granularity" : "by",
      ]);
    }
  });
});
