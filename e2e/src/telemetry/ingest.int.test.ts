import { makeEvent } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

let stack: TelemetryStack;
beforeAll(async () => {
  stack = await startTelemetryStack();
});
afterAll(() => stack.stop());

describe("ingest", () => {
  it("keeps an access-log row only for logged requests, and usage for every request", async () => {
    const { accountId, owner } = await stack.newAccount();
    const logged = makeEvent({ account_id: accountId, total_tokens: 150, cost_usd: 0.00075 });
    const unlogged = makeEvent({
      account_id: accountId,
      logged: false,
      source_ip: "",
      host: "",
      path: "",
      input_tokens: 1000,
      output_tokens: 0,
      total_tokens: 1000,
      cost_usd: 0.0025,
      input_cost_usd: 0.0025,
      output_cost_usd: 0,
    });
    await stack.publish([logged, unlogged]);
    await stack.settle();

    const page = await stack.accessLogs(owner);
    expect(page.total_records).toBe(1);
    expect(page.data.map((entry) => entry.id)).toEqual([logged.id]);
    const {
      request_prompt: _p,
      response_completion: _c,
      v: _v,
      account_id: _a,
      logged: _l,
      user_email: _e,
      user_name: _n,
      reservation_id: _r,
      ...entry
    } = logged;
    expect(page.data[0]).toEqual(entry);

    const [bucket] = await stack.usage(owner);
    expect(bucket).toMatchObject({
      period_start: "2025-03-10T00:00:00Z",
      input_tokens: 1100,
      total_tokens: 1150,
      cost_usd: 0.00325,
    });
  });

  it("does not duplicate rows or usage when events are delivered again", async () => {
    const { accountId, owner } = await stack.newAccount();
    const events = Array.from({ length: 20 }, (_, i) =>
      makeEvent({
        account_id: accountId,
        session_id: i % 2 === 0 ? "s-even" : "",
        cost_usd: 0.000000001 * (i + 1),
      }),
    );
    await stack.publish(events);
    await stack.settle();
    // A different Nats-Msg-Id gets past JetStream's duplicate window: the stream holds every event
    // twice, as after a crash between insert and ack, and telemetry writes them all again.
    await stack.publish(events, (event) => `${event.id}-again`);
    await stack.publish(events.slice(0, 5), (event) => `${event.id}-third`);
    await stack.settle();

    const page = await stack.accessLogs(owner, { page_size: "100" });
    expect(page.total_records).toBe(20);
    expect(new Set(page.data.map((entry) => entry.id)).size).toBe(20);
    const sessions = await stack.sessions(owner, { page_size: "100" });
    expect(sessions.total_records).toBe(11);
    expect(sessions.data.find((s) => s.session_id === "s-even")?.request_count).toBe(10);
    const [bucket] = await stack.usage(owner);
    expect(bucket?.total_tokens).toBe(20 * 150);
    expect(bucket?.cost_usd).toBe(0.00000021);

    // Merging collapses the stored copies too (reads never depended on it).
    await stack.warehouse.command("OPTIMIZE TABLE usage_events FINAL");
    const stored = await stack.warehouse.query<{ n: string }>(
      "SELECT count() AS n FROM usage_events WHERE account_id = {a:String}",
      { a: accountId },
    );
    expect(stored).toEqual([{ n: "20" }]);
  });

  it("sums money exactly", async () => {
    const { accountId, owner } = await stack.newAccount();
    // 0.1 + 0.2 drifts as floats; 1000 × one nano-USD must be exactly 0.000001.
    const events = [
      makeEvent({ account_id: accountId, cost_usd: 0.1 }),
      makeEvent({ account_id: accountId, cost_usd: 0.2 }),
      ...Array.from({ length: 1000 }, () =>
        makeEvent({ account_id: accountId, cost_usd: 0.000000001, logged: false }),
      ),
    ];
    await stack.publish(events);
    await stack.settle();
    const [bucket] = await stack.usage(owner);
    expect(bucket?.cost_usd).toBe(0.300001);
    const stored = await stack.warehouse.query<{ total: string }>(
      "SELECT toString(sum(cost_usd)) AS total FROM (SELECT * FROM usage_events WHERE account_id = {a:String} LIMIT 1 BY id)",
      { a: accountId },
    );
    expect(stored).toEqual([{ total: "0.300001" }]);
  });

  it("terminates a malformed event and goes on with the next ones", async () => {
    const { accountId, owner } = await stack.newAccount();
    const { publishEvent } = await import("@agentnet/bus");
    await publishEvent(
      stack.nc,
      `agn.requests.${accountId}`,
      { v: 1, id: "broken", account_id: accountId },
      "broken-1",
    );
    const good = makeEvent({ account_id: accountId });
    await stack.publish([good]);
    await stack.settle();
    const page = await stack.accessLogs(owner);
    expect(page.data.map((entry) => entry.id)).toEqual([good.id]);
  });
});
