import type { AccessLogEntryView, McpToolCall } from "@agentnet/contracts";
import { makeEvent } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

let stack: TelemetryStack;
beforeAll(async () => {
  stack = await startTelemetryStack();
});
afterAll(() => stack.stop());

const toolCall: McpToolCall = {
  server_id: "mcp_issues",
  server: "issues",
  tool: "get_issue",
  request_bytes: 120,
  response_bytes: 480,
};

/** A tool call's event as the proxy publishes it (apps/gateway-proxy/src/mcp/tool-call.ts). */
const toolCallEvent = (accountId: string, overrides: Parameters<typeof makeEvent>[0] = {}) =>
  makeEvent({
    account_id: accountId,
    session_id: "s-agent",
    provider: "mcp",
    model: "issues__get_issue",
    resolved_provider_id: "mcp_issues",
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    cached_input_tokens: 0,
    cache_creation_tokens: 0,
    cost_usd: 0.002,
    input_cost_usd: 0,
    cached_input_cost_usd: 0,
    cache_creation_cost_usd: 0,
    output_cost_usd: 0,
    cache_cost_usd: 0,
    tool_call: toolCall,
    ...overrides,
  });

describe("an MCP tool call's row", () => {
  it("reads with what it called in the list, by id and in its session beside the model calls, and costs its price", async () => {
    const { accountId, owner, token } = await stack.newAccount();
    const call = toolCallEvent(accountId, { timestamp: "2025-03-10T12:00:02.000Z" });
    const modelCall = makeEvent({
      account_id: accountId,
      session_id: "s-agent",
      timestamp: "2025-03-10T12:00:01.000Z",
    });
    await stack.publish([call, modelCall]);
    await stack.settle();

    const page = await stack.accessLogs(owner);
    expect(page.data.map((entry) => [entry.id, entry.tool_call])).toEqual([
      [call.id, toolCall],
      [modelCall.id, undefined],
    ]);
    expect(page.data[1]).not.toHaveProperty("tool_call");
    const one = await stack.http<AccessLogEntryView>(`/api/agent-network/access-logs/${call.id}`, token);
    expect(one.body).toMatchObject({ provider: "mcp", model: "issues__get_issue", tool_call: toolCall });

    const filtered = await stack.http<{ data: AccessLogEntryView[] }>(
      "/api/agent-network/access-logs?provider_id=mcp_issues&model=issues__get_issue",
      token,
    );
    expect(filtered.body.data.map((entry) => entry.id)).toEqual([call.id]);

    const sessions = await stack.sessions(owner);
    expect(sessions.data.map((s) => [s.session_id, s.request_count, s.providers.sort()])).toEqual([
      ["s-agent", 2, [modelCall.provider, "mcp"].sort()],
    ]);
    expect(sessions.data[0]?.entries.map((entry) => entry.tool_call)).toEqual([undefined, toolCall]);
    expect((await stack.http("/api/agent-network/access-logs?sort_by=tool_call", token)).status).toBe(400);
    const usage = await stack.usage(owner);
    expect(usage.map((bucket) => bucket.cost_usd)).toEqual([modelCall.cost_usd + 0.002]);
  });
});
