import type { GatewayRequestEvent } from "@agentnet/contracts";
import { uniqueId } from "./fixtures";

/** A complete, valid gateway request event; a test states only the fields it is about. */
export function makeEvent(overrides: Partial<GatewayRequestEvent> = {}): GatewayRequestEvent {
  return {
    v: 1,
    id: uniqueId("req"),
    account_id: "acc_default",
    service_id: "svc_agent_network",
    timestamp: "2025-03-10T12:00:00.000Z",
    status_code: 200,
    duration_ms: 420,
    user_id: "user_default",
    user_email: "dev@example.com",
    user_name: "Dev Example",
    source_ip: "10.0.0.7",
    method: "POST",
    host: "api.openai.com",
    path: "/v1/chat/completions",
    provider: "openai",
    model: "gpt-4o",
    session_id: "",
    resolved_provider_id: "prov_openai",
    selected_policy_id: "pol_default",
    decision: "allow",
    deny_reason: "",
    input_tokens: 100,
    output_tokens: 50,
    total_tokens: 150,
    cached_input_tokens: 0,
    cache_creation_tokens: 0,
    cost_usd: 0.00075,
    input_cost_usd: 0.00025,
    cached_input_cost_usd: 0,
    cache_creation_cost_usd: 0,
    output_cost_usd: 0.0005,
    cache_cost_usd: 0,
    stream: false,
    group_ids: ["grp_all"],
    logged: true,
    ...overrides,
  };
}
