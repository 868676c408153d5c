import type { Caller, GatewayRequestEvent, RequestAttempt, ReservedCounter } from "@agentnet/contracts";
import { type CostBreakdown, zeroCost } from "@agentnet/pricing";
import type { RequestSeries } from "../metrics";
import { type UsageCounts, type Wire, zeroUsage } from "../wires";

/** Everything known about one request when it ends, allowed or denied. */
export interface RequestRecord {
  id: string;
  startedAt: number;
  endedAt: number;
  caller: Caller;
  /** Log collection was on: source_ip, host and path are kept only then. */
  logged: boolean;
  wire: Wire;
  sourceIp: string;
  method: string;
  /** Upstream host and path (the request's own path when it was denied before routing). */
  host: string;
  path: string;
  providerName: string;
  providerId: string;
  policyId: string;
  model: string;
  sessionId: string;
  decision: "allow" | "deny";
  denyReason: string;
  status: number;
  stream: boolean;
  /** false: neither counted nor logged (token counting generates nothing and is free). */
  metered: boolean;
  usage?: UsageCounts;
  cost?: CostBreakdown;
  /** The counters the request counts on (capped ones with their lease): settlement reads them. */
  counters?: ReservedCounter[];
  prompt?: string;
  completion?: string;
  /** The model the vendor says answered (traces only: the event names the model asked for). */
  responseModel?: string | undefined;
  /** Every attempt at a provider, once there was more than one (undefined until then). */
  attempts?: RequestAttempt[];
  /** Where the request is counted (`ProxyMetrics`); undefined with metrics off. */
  series?: RequestSeries;
}

/** The synthesised agent-network service of an account: one per account, named by its id. */
export const serviceIdOf = (accountId: string): string => `agent-network:${accountId}`;

export function buildEvent(record: RequestRecord): GatewayRequestEvent {
  const usage = record.usage ?? zeroUsage();
  const cost = record.cost ?? zeroCost();
  const event: GatewayRequestEvent = {
    v: 1,
    id: record.id,
    account_id: record.caller.account_id,
    service_id: serviceIdOf(record.caller.account_id),
    timestamp: new Date(record.startedAt).toISOString(),
    status_code: record.status,
    duration_ms: Math.max(0, Math.round(record.endedAt - record.startedAt)),
    user_id: record.caller.user_id,
    user_email: record.caller.email,
    user_name: record.caller.name,
    source_ip: record.logged ? record.sourceIp : "",
    method: record.method,
    host: record.logged ? record.host : "",
    path: record.logged ? record.path : "",
    provider: record.providerName,
    model: record.model,
    session_id: record.sessionId,
    resolved_provider_id: record.providerId,
    selected_policy_id: record.policyId,
    decision: record.decision,
    deny_reason: record.denyReason,
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    total_tokens: record.wire.totalTokens(usage),
    cached_input_tokens: usage.cached_input_tokens,
    cache_creation_tokens: usage.cache_creation_tokens,
    cost_usd: cost.cost_usd,
    input_cost_usd: cost.input_cost_usd,
    cached_input_cost_usd: cost.cached_input_cost_usd,
    cache_creation_cost_usd: cost.cache_creation_cost_usd,
    output_cost_usd: cost.output_cost_usd,
    cache_cost_usd: cost.cache_cost_usd,
    stream: record.stream,
    group_ids: record.caller.group_ids,
    logged: record.logged,
  };
  if (record.counters && record.counters.length > 0) event.reserved_counters = record.counters;
  if (record.attempts && record.attempts.length > 1) event.attempts = record.attempts;
  if (record.prompt !== undefined) event.request_prompt = record.prompt;
  if (record.completion !== undefined) event.response_completion = record.completion;
  return event;
}
