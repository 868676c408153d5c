import { createHash } from "node:crypto";
import {
  type Caller,
  type GatewayMcpServer,
  type GatewayRequestEvent,
  MAX_MODEL_LENGTH,
  MAX_SESSION_ID_LENGTH,
  type ReservedCounter,
  type Settings,
} from "@agentnet/contracts";
import { nanosToUsd, usdToNanos } from "@agentnet/pricing";
import { serviceIdOf } from "../events/build";

/** The provider of every MCP tool call's row: its model is `{server}__{tool}`. */
export const MCP_PROVIDER = "mcp";

/** Everything known about one `tools/call` when it ends, granted or refused. */
export interface ToolCallRecord {
  id: string;
  startedAt: number;
  endedAt: number;
  caller: Caller;
  settings: Pick<Settings, "enable_log_collection">;
  server: Pick<GatewayMcpServer, "id" | "name" | "url" | "price_per_call">;
  /** The first policy granting the tool, or the server when none does. */
  policyId: string;
  tool: string;
  sourceIp: string;
  /** The client's own path (`/mcp/{server}`) when refused, the server's when relayed. */
  path: string;
  sessionId: string;
  decision: "allow" | "deny";
  denyReason: string;
  status: number;
  requestBytes: number;
  responseBytes: number;
  /** The counters the call counts on (a priced call under caps, with the lease that admitted it). */
  counters?: ReservedCounter[];
  /** The call's arguments and its answer, as the capture plan lets them leave the proxy. */
  arguments?: string;
  answer?: string;
}

/** Longest tool name a row keeps: a client may name anything, and the row's model holds the server too. */
const MAX_TOOL_CHARS = MAX_MODEL_LENGTH - 40;

/**
 * The session a tool call belongs to: the one the client names (`x-session-id`, Claude Code's
 * header, ...) when it names one, else its MCP session, as a short digest of what identifies it
 * (`mcpSession`: on `/mcp/{server}` the server's own session id, which never leaves the gateway; on
 * `/mcp` the client's joined session), else none (a singleton, as for model calls).
 */
export function toolCallSession(named: string, mcpSession: string | undefined): string {
  if (named !== "" && named.length <= MAX_SESSION_ID_LENGTH) return named;
  if (mcpSession === undefined) return "";
  return `mcp-${createHash("sha256").update(mcpSession).digest("base64url").slice(0, 22)}`;
}

/** A call costs its server's price once the server answered it (2xx); a refused or failed call costs nothing. */
export const isCharged = (record: Pick<ToolCallRecord, "decision" | "status">): boolean =>
  record.decision === "allow" && record.status >= 200 && record.status < 300;

/** The tool call's request event: a row beside model calls, counted in usage with the server's price. */
export function toolCallEvent(record: ToolCallRecord): GatewayRequestEvent {
  const logged = record.settings.enable_log_collection;
  const tool = record.tool.length > MAX_TOOL_CHARS ? record.tool.slice(0, MAX_TOOL_CHARS) : record.tool;
  // Priced as the admin set it, in whole nano-USD as every cost is.
  const cost = isCharged(record) ? nanosToUsd(usdToNanos(record.server.price_per_call)) : 0;
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
    source_ip: logged ? record.sourceIp : "",
    method: "POST",
    host: logged && record.decision === "allow" ? new URL(record.server.url).host : "",
    path: logged ? record.path : "",
    provider: MCP_PROVIDER,
    model: `${record.server.name}__${tool}`,
    session_id: record.sessionId,
    resolved_provider_id: record.server.id,
    selected_policy_id: record.policyId,
    decision: record.decision,
    deny_reason: record.denyReason,
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    cached_input_tokens: 0,
    cache_creation_tokens: 0,
    cost_usd: cost,
    input_cost_usd: 0,
    cached_input_cost_usd: 0,
    cache_creation_cost_usd: 0,
    output_cost_usd: 0,
    cache_cost_usd: 0,
    stream: false,
    group_ids: record.caller.group_ids,
    logged,
    tool_call: {
      server_id: record.server.id,
      server: record.server.name,
      tool,
      request_bytes: record.requestBytes,
      response_bytes: record.responseBytes,
    },
  };
  if (record.counters && record.counters.length > 0) event.reserved_counters = record.counters;
  if (record.arguments !== undefined) event.request_prompt = record.arguments;
  if (record.answer !== undefined) event.response_completion = record.answer;
  return event;
}
