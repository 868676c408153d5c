import type { GatewayRequestEvent } from "@agentnet/contracts";
import { usdToDecimalText } from "./money";

/** Epoch milliseconds: exact for DateTime64(3) whatever offset the event's timestamp carries. */
const timestampOf = (event: GatewayRequestEvent): number => Date.parse(event.timestamp);

/*
 * Rows are built as fixed-shape object literals and serialised with a plain JSON.stringify (no
 * replacer, no spread, no Object.fromEntries): that keeps V8 on its fast JSON path, which is most of
 * what one ingested event costs on the main thread. Money goes as exact decimal text.
 */

/**
 * The usage row every event yields, logged or not, as one JSONEachRow line: only what the overview
 * filters and sums. Log collection off does not hide usage (spec: usage is aggregated
 * independently of it).
 */
export function toUsageLine(event: GatewayRequestEvent): string {
  return JSON.stringify({
    account_id: event.account_id,
    id: event.id,
    timestamp: timestampOf(event),
    user_id: event.user_id,
    session_id: event.session_id,
    group_ids: event.group_ids,
    resolved_provider_id: event.resolved_provider_id,
    model: event.model,
    input_tokens: event.input_tokens,
    output_tokens: event.output_tokens,
    total_tokens: event.total_tokens,
    cached_input_tokens: event.cached_input_tokens,
    cache_creation_tokens: event.cache_creation_tokens,
    cost_usd: usdToDecimalText(event.cost_usd),
    input_cost_usd: usdToDecimalText(event.input_cost_usd),
    cached_input_cost_usd: usdToDecimalText(event.cached_input_cost_usd),
    cache_creation_cost_usd: usdToDecimalText(event.cache_creation_cost_usd),
    output_cost_usd: usdToDecimalText(event.output_cost_usd),
    cache_cost_usd: usdToDecimalText(event.cache_cost_usd),
  });
}

/** The access-log row as one JSONEachRow line, or undefined when log collection was off. */
export function toAccessLogLine(event: GatewayRequestEvent): string | undefined {
  if (!event.logged) return undefined;
  return JSON.stringify({
    account_id: event.account_id,
    id: event.id,
    timestamp: timestampOf(event),
    service_id: event.service_id,
    status_code: event.status_code,
    duration_ms: event.duration_ms,
    user_id: event.user_id,
    user_email: event.user_email,
    user_name: event.user_name,
    source_ip: event.source_ip,
    method: event.method,
    host: event.host,
    path: event.path,
    provider: event.provider,
    model: event.model,
    session_id: event.session_id,
    resolved_provider_id: event.resolved_provider_id,
    selected_policy_id: event.selected_policy_id,
    decision: event.decision,
    deny_reason: event.deny_reason,
    input_tokens: event.input_tokens,
    output_tokens: event.output_tokens,
    total_tokens: event.total_tokens,
    cached_input_tokens: event.cached_input_tokens,
    cache_creation_tokens: event.cache_creation_tokens,
    cost_usd: usdToDecimalText(event.cost_usd),
    input_cost_usd: usdToDecimalText(event.input_cost_usd),
    cached_input_cost_usd: usdToDecimalText(event.cached_input_cost_usd),
    cache_creation_cost_usd: usdToDecimalText(event.cache_creation_cost_usd),
    output_cost_usd: usdToDecimalText(event.output_cost_usd),
    cache_cost_usd: usdToDecimalText(event.cache_cost_usd),
    stream: event.stream,
    group_ids: event.group_ids,
    // Empty means "not captured"; reads leave the field out then.
    request_prompt: event.request_prompt ?? "",
    response_completion: event.response_completion ?? "",
  });
}
