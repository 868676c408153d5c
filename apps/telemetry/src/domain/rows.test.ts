import { makeEvent } from "@agentnet/testkit";
import { describe, expect, it } from "vitest";
import { ACCESS_LOG_LINE_COLUMNS, toAccessLogLine, toUsageLine, USAGE_LINE_COLUMNS } from "./rows";

/** A positional line read back against its column list. */
const byColumn = (columns: readonly string[], line: string | undefined) => {
  const values = JSON.parse(line ?? "[]") as unknown[];
  expect(values).toHaveLength(columns.length);
  return Object.fromEntries(columns.map((column, i) => [column, values[i]]));
};

describe("rows", () => {
  it("puts every field of an access-log line under its own column", () => {
    const event = makeEvent({
      session_id: "s1",
      request_prompt: "hi",
      cost_usd: 0.1,
      input_cost_usd: 1e-9,
      trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
      attempts: [
        { provider_id: "prov_a", provider: "anthropic", model: "m", status: 529, error: "", duration_ms: 80 },
        {
          provider_id: "prov_b",
          provider: "anthropic",
          model: "m",
          status: 200,
          error: "",
          duration_ms: 900,
        },
      ],
    });
    const {
      v: _v,
      logged: _l,
      timestamp,
      cost_usd,
      input_cost_usd,
      output_cost_usd,
      attempts,
      ...fields
    } = event;
    expect(byColumn(ACCESS_LOG_LINE_COLUMNS, toAccessLogLine(event))).toEqual({
      ...fields,
      timestamp: Date.parse(timestamp),
      cost_usd: "0.1",
      input_cost_usd: "0.000000001",
      output_cost_usd: "0.0005",
      cached_input_cost_usd: "0",
      cache_creation_cost_usd: "0",
      cache_cost_usd: "0",
      response_completion: "",
      attempts: JSON.stringify(attempts),
      tool_call: "",
    });
    const single = byColumn(ACCESS_LOG_LINE_COLUMNS, toAccessLogLine(makeEvent()));
    expect(single.trace_id).toBe("");
    expect(single.attempts).toBe("");
    const toolCall = {
      server_id: "mcp_1",
      server: "issues",
      tool: "get",
      request_bytes: 9,
      response_bytes: 40,
    };
    expect(
      byColumn(ACCESS_LOG_LINE_COLUMNS, toAccessLogLine(makeEvent({ tool_call: toolCall }))).tool_call,
    ).toBe(JSON.stringify(toolCall));
    expect(byColumn(ACCESS_LOG_LINE_COLUMNS, toAccessLogLine(makeEvent({ attempts: [] }))).attempts).toBe("");
    expect(toAccessLogLine(makeEvent({ logged: false }))).toBeUndefined();
  });

  it("puts every field of a usage line under its own column", () => {
    const event = makeEvent({
      session_id: "s1",
      group_ids: ["g1", "g2"],
      status_code: 429,
      decision: "deny",
      duration_ms: 12,
    });
    expect(byColumn(USAGE_LINE_COLUMNS, toUsageLine(event))).toMatchObject({
      account_id: event.account_id,
      id: event.id,
      timestamp: Date.parse(event.timestamp),
      user_id: event.user_id,
      session_id: "s1",
      group_ids: ["g1", "g2"],
      resolved_provider_id: event.resolved_provider_id,
      model: event.model,
      total_tokens: 150,
      cost_usd: "0.00075",
      cache_cost_usd: "0",
      status_code: 429,
      decision: "deny",
      duration_ms: 12,
    });
  });
});
