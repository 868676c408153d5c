import type { GatewayRequestEvent } from "@agentnet/contracts";
import { usdToNanos } from "@agentnet/pricing";

/** What the request really used, in counter units. */
export interface Actual {
  tokens_input: number;
  tokens_output: number;
  cost_nanos: number;
  tool_calls: number;
}

/**
 * outcomeOfEvent: a denied request, or a failed one that used no tokens, only releases its
 * reservation; every other request settles it, swapping the held estimate for real usage.
 */
export function outcomeOfEvent(event: GatewayRequestEvent): "settled" | "released" {
  if (event.decision === "deny") return "released";
  const used = event.input_tokens + event.output_tokens;
  if (event.status_code >= 400 && used === 0) return "released";
  return "settled";
}

export const actualOf = (event: GatewayRequestEvent): Actual => ({
  tokens_input: event.input_tokens,
  tokens_output: event.output_tokens,
  cost_nanos: usdToNanos(event.cost_usd),
  // As the proxy charges a call (mcp/tool-call.ts `isCharged`): once the server answered it 2xx.
  tool_calls: event.tool_call && event.status_code >= 200 && event.status_code < 300 ? 1 : 0,
});
