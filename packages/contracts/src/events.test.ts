import { describe, expect, it } from "vitest";
import { AccessLogEntry } from "./access-logs";
import { GatewayRequestEvent } from "./events";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeEvent = (overrides: Record<string, unknown> = {}) => ({
  v: 1,
  id: "req-1",
  account_id: "acc-1",
  logged: true,
  reservation_id: "res-1",
  user_email: "alice@example.com",
  user_name: "Alice",
  service_id: "svc-agent-network",
  timestamp: "2025-01-01T10:00:00.123Z",
  status_code: 200,
  duration_ms: 850,
  user_id: "usr-1",
  source_ip: "10.0.0.5",
  method: "POST",
  host: "api.openai.com",
  path: "/v1/chat/completions",
  provider: "openai_api",
  model: "gpt-4o-mini",
  session_id: "",
  resolved_provider_id: "prov-1",
  selected_policy_id: "pol-1",
  decision: "allow",
  deny_reason: "",
  input_tokens: 100,
  output_tokens: 20,
  total_tokens: 120,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  cost_usd: 0.0003,
  input_cost_usd: 0.0002,
  cached_input_cost_usd: 0,
  cache_creation_cost_usd: 0,
  output_cost_usd: 0.0001,
  cache_cost_usd: 0,
  stream: true,
  group_ids: ["grp-eng"],
  ...overrides,
});

describe("GatewayRequestEvent", () => {
  it("parses a version 1 event", () => {
    expect(GatewayRequestEvent.parse(makeEvent())).toEqual(makeEvent());
  });

  it("carries every access-log entry field", () => {
    const event = GatewayRequestEvent.parse(makeEvent({ request_prompt: "hi", response_completion: "yo" }));
    expect(AccessLogEntry.parse(event)).toMatchObject({ id: "req-1", request_prompt: "hi" });
    expect(Object.keys(GatewayRequestEvent.shape)).toEqual(
      expect.arrayContaining(Object.keys(AccessLogEntry.shape)),
    );
  });

  it("accepts a request denied before reserving (no reservation_id)", () => {
    const { reservation_id: _dropped, ...rest } = makeEvent({ decision: "deny" });
    expect(GatewayRequestEvent.safeParse(rest).success).toBe(true);
  });

  it("rejects any other version", () => {
    expect(issuePaths(GatewayRequestEvent.safeParse(makeEvent({ v: 2 })))).toEqual(["v"]);
  });

  it.each(["v", "account_id", "logged", "user_email", "user_name", "model", "cost_usd"])(
    "requires %s",
    (field) => {
      const event: Record<string, unknown> = makeEvent();
      delete event[field];
      expect(issuePaths(GatewayRequestEvent.safeParse(event))).toEqual([field]);
    },
  );

  it("rejects money sent as text", () => {
    expect(issuePaths(GatewayRequestEvent.safeParse(makeEvent({ cost_usd: "0.1" })))).toEqual(["cost_usd"]);
  });

  it("rejects an empty reservation_id", () => {
    expect(issuePaths(GatewayRequestEvent.safeParse(makeEvent({ reservation_id: "" })))).toEqual([
      "reservation_id",
    ]);
  });
});
