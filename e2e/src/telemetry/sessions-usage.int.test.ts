import type { Caller, Granularity } from "@agentnet/contracts";
import { makeEvent } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

let stack: TelemetryStack;
let owner: Caller;
let accountId: string;

beforeAll(async () => {
  stack = await startTelemetryStack();
  ({ owner, accountId } = await stack.newAccount());
});
afterAll(() => stack.stop());

const at = (iso: string) => new Date(iso).toISOString();

describe("sessions", () => {
  it("groups entries by session id, makes singletons of the rest and aggregates each", async () => {
    const { owner, accountId } = await stack.newAccount();
    const e = (o: Parameters<typeof makeEvent>[0]) => makeEvent({ account_id: accountId, ...o });
    const a1 = e({
      session_id: "sa",
      timestamp: at("2025-03-10T10:00:00Z"),
      model: "gpt-4o",
      cost_usd: 0.1,
      group_ids: ["g1"],
    });
    const a2 = e({
      session_id: "sa",
      timestamp: at("2025-03-10T10:05:00Z"),
      model: "claude",
      provider: "anthropic",
      cost_usd: 0.2,
      decision: "deny",
      group_ids: ["g2"],
    });
    const b1 = e({ session_id: "sb", timestamp: at("2025-03-10T09:00:00Z") });
    const b2 = e({ session_id: "sb", timestamp: at("2025-03-10T11:00:00Z") });
    const lone1 = e({ timestamp: at("2025-03-10T10:30:00Z") });
    const lone2 = e({ timestamp: at("2025-03-10T08:00:00Z") });
    await stack.publish([a2, b1, lone1, a1, b2, lone2]);
    await stack.settle();

    const page = await stack.sessions(owner);
    expect(page.total_records).toBe(4);
    // Default: last activity, newest first.
    expect(page.data.map((s) => s.entries.map((x) => x.id))).toEqual([
      [b1.id, b2.id],
      [lone1.id],
      [a1.id, a2.id],
      [lone2.id],
    ]);
    const sa = page.data[2];
    expect(sa).toMatchObject({
      session_id: "sa",
      started_at: "2025-03-10T10:00:00.000Z",
      ended_at: "2025-03-10T10:05:00.000Z",
      request_count: 2,
      total_tokens: 300,
      decision: "deny",
    });
    expect(sa?.cost_usd).toBeCloseTo(0.3, 12);
    expect(sa?.cost_usd).toBe(0.3);
    expect([...(sa?.group_ids ?? [])].sort()).toEqual(["g1", "g2"]);
    expect([...(sa?.models ?? [])].sort()).toEqual(["claude", "gpt-4o"]);
    expect([...(sa?.providers ?? [])].sort()).toEqual(["anthropic", "openai"]);
    expect(page.data[0]?.decision).toBe("allow");
    expect(page.data[1]).toMatchObject({ session_id: "", request_count: 1 });

    const byStart = await stack.sessions(owner, { sort_by: "started_at", sort_order: "asc" });
    expect(byStart.data.map((s) => s.entries[0]?.id)).toEqual([lone2.id, b1.id, a1.id, lone1.id]);
    const paged = await stack.sessions(owner, { page_size: "3", page: "2" });
    expect(paged).toMatchObject({ page: 2, page_size: 3, total_records: 4, total_pages: 2 });
    expect(paged.data.map((s) => s.entries[0]?.id)).toEqual([lone2.id]);
    const denied = await stack.sessions(owner, { sort_by: "decision", sort_order: "desc", page_size: "1" });
    expect(denied.data[0]?.session_id).toBe("sa");
    const filtered = await stack.sessions(owner, { model: "claude" });
    expect(filtered.data.map((s) => [s.session_id, s.request_count])).toEqual([["sa", 1]]);
  });

  it("lists a session's first 100 entries oldest first, prompts only where captured, in every order", async () => {
    const { owner, accountId } = await stack.newAccount();
    const long = Array.from({ length: 105 }, (_, i) =>
      makeEvent({
        account_id: accountId,
        session_id: "s-long",
        timestamp: new Date(Date.UTC(2025, 2, 10, 9, 0, 104 - i)).toISOString(),
        ...(i === 104 ? { request_prompt: "hello there", response_completion: "general kenobi" } : {}),
      }),
    );
    await stack.publish(long);
    await stack.settle();
    const oldestFirst = [...long].reverse();

    for (const query of [{}, { sort_by: "started_at", sort_order: "asc" }] as const) {
      const [session] = (await stack.sessions(owner, query)).data;
      expect(session?.request_count).toBe(105);
      expect(session?.entries.map((entry) => entry.id)).toEqual(oldestFirst.slice(0, 100).map((e) => e.id));
      expect(session?.entries[0]).toMatchObject({
        request_prompt: "hello there",
        response_completion: "general kenobi",
      });
      expect(session?.entries.slice(1).some((entry) => "request_prompt" in entry)).toBe(false);
    }
  });
});

describe("usage overview", () => {
  beforeAll(async () => {
    const e = (timestamp: string, o: Parameters<typeof makeEvent>[0] = {}) =>
      makeEvent({ account_id: accountId, timestamp, logged: false, ...o });
    await stack.publish([
      e("2025-03-03T00:00:00Z"), // Monday
      e("2025-03-09T23:59:59.999Z"), // Sunday, same ISO week
      e("2025-03-10T12:00:30Z", {
        user_id: "u2",
        model: "claude",
        resolved_provider_id: "p2",
        group_ids: ["g2"],
        session_id: "s2",
      }),
      e("2025-03-10T12:00:59Z"),
      e("2025-03-10T13:15:00Z"),
      e("2025-04-01T00:00:00Z", { cost_usd: 1.5, input_cost_usd: 1, output_cost_usd: 0.5 }),
    ]);
    await stack.settle();
  });

  const starts = async (granularity: Granularity, extra: Record<string, string> = {}) =>
    (await stack.usage(owner, { granularity, ...extra })).map((b) => [b.period_start, b.total_tokens]);

  it("buckets by minute, hour, day (the default), week from Monday and month, in UTC", async () => {
    expect(await starts("month")).toEqual([
      ["2025-03-01T00:00:00Z", 750],
      ["2025-04-01T00:00:00Z", 150],
    ]);
    expect(await starts("week")).toEqual([
      ["2025-03-03T00:00:00Z", 300],
      ["2025-03-10T00:00:00Z", 450],
      ["2025-03-31T00:00:00Z", 150],
    ]);
    expect((await stack.usage(owner)).map((b) => b.period_start)).toEqual([
      "2025-03-03T00:00:00Z",
      "2025-03-09T00:00:00Z",
      "2025-03-10T00:00:00Z",
      "2025-04-01T00:00:00Z",
    ]);
    const range = { start_date: "2025-03-10T00:00:00Z", end_date: "2025-03-10T23:59:59Z" };
    expect(await starts("hour", range)).toEqual([
      ["2025-03-10T12:00:00Z", 300],
      ["2025-03-10T13:00:00Z", 150],
    ]);
    expect(await starts("minute", range)).toEqual([
      ["2025-03-10T12:00:00Z", 300],
      ["2025-03-10T13:15:00Z", 150],
    ]);
  });

  it("sums every token and cost field, and applies the filters", async () => {
    const [april] = await stack.usage(owner, { granularity: "month", start_date: "2025-04-01T00:00:00Z" });
    expect(april).toEqual({
      period_start: "2025-04-01T00:00:00Z",
      input_tokens: 100,
      output_tokens: 50,
      total_tokens: 150,
      cached_input_tokens: 0,
      cache_creation_tokens: 0,
      cost_usd: 1.5,
      input_cost_usd: 1,
      cached_input_cost_usd: 0,
      cache_creation_cost_usd: 0,
      output_cost_usd: 0.5,
      cache_cost_usd: 0,
    });
    const filters: Record<string, string>[] = [
      { user_id: "u2" },
      { model: "claude" },
      { provider_id: "p2" },
      { group_id: "g2" },
      { session_id: "s2" },
    ];
    for (const filter of filters) {
      expect(await starts("month", filter)).toEqual([["2025-03-01T00:00:00Z", 150]]);
    }
    expect(await starts("month", { end_date: "2025-03-09T23:59:59.999Z" })).toEqual([
      ["2025-03-01T00:00:00Z", 300],
    ]);
  });
});
