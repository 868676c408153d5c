import type { GatewayRequestEvent } from "@agentnet/contracts";
import { usdToDecimal } from "./money";

/** Cost columns, in the order the contract lists them. */
export const COST_FIELDS = [
  "cost_usd",
  "input_cost_usd",
  "cached_input_cost_usd",
  "cache_creation_cost_usd",
  "output_cost_usd",
  "cache_cost_usd",
] as const;

export const TOKEN_FIELDS = [
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "cached_input_tokens",
  "cache_creation_tokens",
] as const;

type Row = Record<string, unknown>;

const tokensOf = (event: GatewayRequestEvent): Row =>
  Object.fromEntries(TOKEN_FIELDS.map((field) => [field, event[field]]));

const costsOf = (event: GatewayRequestEvent): Row =>
  Object.fromEntries(COST_FIELDS.map((field) => [field, usdToDecimal(event[field])]));

/** Epoch milliseconds: exact for DateTime64(3) whatever offset the event's timestamp carries. */
const timestampOf = (event: GatewayRequestEvent): number => Date.parse(event.timestamp);

/**
 * The usage row every event yields, logged or not: only what the overview filters and sums.
 * Log collection off does not hide usage (spec: usage is aggregated independently of it).
 */
export function toUsageRow(event: GatewayRequestEvent): Row {
  return {
    account_id: event.account_id,
    id: event.id,
    timestamp: timestampOf(event),
    user_id: event.user_id,
    session_id: event.session_id,
    group_ids: event.group_ids,
    resolved_provider_id: event.resolved_provider_id,
    model: event.model,
    ...tokensOf(event),
    ...costsOf(event),
  };
}

/** The access-log row, or undefined when log collection was off for the request. */
export function toAccessLogRow(event: GatewayRequestEvent): Row | undefined {
  if (!event.logged) return undefined;
  return {
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
    ...tokensOf(event),
    ...costsOf(event),
    stream: event.stream,
    group_ids: event.group_ids,
    // Empty means "not captured"; reads leave the field out then.
    request_prompt: event.request_prompt ?? "",
    response_completion: event.response_completion ?? "",
  };
}
