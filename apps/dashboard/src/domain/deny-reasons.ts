/** Deny reason codes in words, for people reading the access log. */
const WORDS: Record<string, string> = {
  "llm_policy.token_cap_exceeded": "The policy's token cap for this window was reached",
  "llm_policy.budget_cap_exceeded": "The policy's spending cap (USD) for this window was reached",
  "budget_rule.token_cap_exceeded": "A budget rule's token cap for this window was reached",
  "budget_rule.budget_cap_exceeded": "A budget rule's spending cap (USD) for this window was reached",
  "llm_policy.tool_call_cap_exceeded": "The policy's MCP tool-call cap for this window was reached",
  "budget_rule.tool_call_cap_exceeded": "A budget rule's MCP tool-call cap for this window was reached",
  "llm_policy.no_matching_policy": "No policy lets this caller use a provider for this request",
  "guardrail.model_not_allowed": "The model is not on a guardrail's allowlist",
  "provider.disabled": "The provider for this request is disabled",
  "gateway.flavor_mismatch": "The request's API shape does not match the provider's",
  "gateway.endpoint_mismatch": "The token was used through another account's endpoint",
  "gateway.not_configured": "The agent network is not set up for this account",
  "gateway.proxy_lost":
    "The proxy serving it stopped before the answer ended; charged what it was admitted with",
  "gateway.upstream_busy":
    "The proxy's connections to the vendor were all in use for longer than it waits; the client may retry",
  "pricing.unknown_model": "The model has no price and a USD limit applies",
  "mcp.tool_not_granted": "No policy grants this MCP tool to the caller",
  "guardrail.tool_blocked": "A guardrail blocks this MCP tool",
};

/** A reason in words; an unknown code is spelled out from its last part and kept in brackets. */
export function denyReasonText(code: string): string {
  if (code === "") return "";
  const known = WORDS[code];
  if (known) return known;
  const last = code.split(".").pop() ?? code;
  const words = last.replaceAll("_", " ").trim();
  const sentence = words ? `${words.charAt(0).toUpperCase()}${words.slice(1)}` : code;
  return `${sentence} (${code})`;
}

/** Decision in words with its reason, e.g. "Denied: The policy's token cap ...". */
export function decisionText(decision: string, denyReason: string): string {
  if (decision === "allow") return "Allowed";
  if (decision === "deny") return denyReason ? `Denied: ${denyReasonText(denyReason)}` : "Denied";
  return decision || "—";
}
