import type { AccessLogEntryView, AccessLogPage, RequestAttempt } from "@agentnet/contracts";
import { makeEvent } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

let stack: TelemetryStack;
beforeAll(async () => {
  stack = await startTelemetryStack();
});
afterAll(() => stack.stop());

const attempt = (overrides: Partial<RequestAttempt>): RequestAttempt => ({
  provider_id: "prov_primary",
  provider: "anthropic",
  model: "claude-sonnet-4-6",
  status: 200,
  error: "",
  duration_ms: 100,
  ...overrides,
});

// A request that failed over twice (529, then a refused connection) and was answered by a third provider.
const attempts = [
  attempt({ status: 529, duration_ms: 80 }),
  attempt({ provider_id: "prov_second", status: 0, error: "connect_failed", duration_ms: 3 }),
  attempt({ provider_id: "prov_third", provider: "anthropic-eu", duration_ms: 900 }),
];

describe("a request answered after several attempts", () => {
  it("is one row that lists its attempts in the list, by id and in its session, and counts once", async () => {
    const { accountId, owner, token } = await stack.newAccount();
    const failedOver = makeEvent({
      account_id: accountId,
      session_id: "s-retry",
      resolved_provider_id: "prov_third",
      provider: "anthropic-eu",
      timestamp: "2025-03-10T12:00:01.000Z",
      attempts,
    });
    const firstTry = makeEvent({ account_id: accountId, session_id: "s-retry" });
    await stack.publish([failedOver, firstTry]);
    await stack.settle();

    const page = await stack.accessLogs(owner);
    expect(page.total_records).toBe(2);
    expect(page.data.map((entry) => [entry.id, entry.attempts])).toEqual([
      [failedOver.id, attempts],
      [firstTry.id, undefined],
    ]);
    expect(page.data[1]).not.toHaveProperty("attempts");

    const overHttp = await stack.http<AccessLogPage>("/api/agent-network/access-logs", token);
    expect(overHttp.body.data[0]?.attempts).toEqual(attempts);
    const one = await stack.http<AccessLogEntryView>(
      `/api/agent-network/access-logs/${failedOver.id}`,
      token,
    );
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: failedOver.id, resolved_provider_id: "prov_third", attempts });
    const single = await stack.http<AccessLogEntryView>(
      `/api/agent-network/access-logs/${firstTry.id}`,
      token,
    );
    expect(single.body).not.toHaveProperty("attempts");

    const sessions = await stack.sessions(owner);
    expect(sessions.data.map((s) => [s.session_id, s.request_count])).toEqual([["s-retry", 2]]);
    expect(sessions.data[0]?.entries.map((entry) => entry.attempts)).toEqual([undefined, attempts]);
    const usage = await stack.usage(owner);
    expect(usage.map((bucket) => bucket.total_tokens)).toEqual([2 * 150]);
  });

  it("cannot be sorted by its attempts", async () => {
    const { token } = await stack.newAccount();
    expect((await stack.http("/api/agent-network/access-logs?sort_by=attempts", token)).status).toBe(400);
  });
});
