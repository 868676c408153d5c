import type { GatewayRequestEvent } from "@agentnet/contracts";
import { usdToDecimalText } from "./money";

/** Epoch milliseconds: exact for DateTime64(3) whatever offset the event's timestamp carries. */
const timestampOf = (event: GatewayRequestEvent): number => Date.parse(event.timestamp);

/*
 * Rows are built as fixed-shape array literals in the order of their column list below and
 * serialised with a plain JSON.stringify (no replacer, no spread, no Object.fromEntries): that
 * keeps V8 on its fast JSON path, which is most of what one ingested event costs on the main
 * thread, and positional rows (JSONCompactEachRow) leave out the field names, more than half of
 * each line, which the engine would otherwise have to parse. Money goes as exact decimal text.
 */

/** The usage_events columns of a usage line, in the line's order. */
export const USAGE_LINE_COLUMNS = [
  "account_id",
  "id",
  "timestamp",
  "user_id",
  "session_id",
  "group_ids",
  "resolved_provider_id",
  "model",
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "cached_input_tokens",
  "cache_creation_tokens",
  "cost_usd",
  "input_cost_usd",
  "cached_input_cost_usd",
  "cache_creation_cost_usd",
  "output_cost_usd",
  "cache_cost_usd",
  "status_code",
  "decision",
  "duration_ms",
] as const;

/**
 * The usage row every event yields, logged or not, as one JSON line of USAGE_LINE_COLUMNS: only
 * what the usage reads filter, sum and take quantiles of. Log collection off does not hide usage (spec: usage is
 * aggregated independently of it).
 */
export function toUsageLine(event: GatewayRequestEvent): string {
  return JSON.stringify([
    event.account_id,
    event.id,
    timestampOf(event),
    event.user_id,
    event.session_id,
    event.group_ids,
    event.resolved_provider_id,
    event.model,
    event.input_tokens,
    event.output_tokens,
    event.total_tokens,
    event.cached_input_tokens,
    event.cache_creation_tokens,
    usdToDecimalText(event.cost_usd),
    usdToDecimalText(event.input_cost_usd),
    usdToDecimalText(event.cached_input_cost_usd),
    usdToDecimalText(event.cache_creation_cost_usd),
    usdToDecimalText(event.output_cost_usd),
    usdToDecimalText(event.cache_cost_usd),
    event.status_code,
    event.decision,
    event.duration_ms,
  ]);
}

/** The access_logs columns of an access-log line, in the line's order. */
export const ACCESS_LOG_LINE_COLUMNS = [
  "account_id",
  "id",
  "timestamp",
  "service_id",
  "status_code",
  "duration_ms",
  "user_id",
  "user_email",
  "user_name",
  "source_ip",
  "method",
  "host",
  "path",
  "provider",
  "model",
  "session_id",
  "resolved_provider_id",
  "selected_policy_id",
  "decision",
  "deny_reason",
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "cached_input_tokens",
  "cache_creation_tokens",
  "cost_usd",
  "input_cost_usd",
  "cached_input_cost_usd",
  "cache_creation_cost_usd",
  "output_cost_usd",
  "cache_cost_usd",
  "stream",
  "group_ids",
  "request_prompt",
  "response_completion",
  "trace_id",
  "attempts",
  "tool_call",
] as const;

/**
 * The access-log row as one JSON line of ACCESS_LOG_LINE_COLUMNS, or undefined when log
 * collection was off.
 */
export function toAccessLogLine(event: GatewayRequestEvent): string | undefined {
  if (!event.logged) return undefined;
  return JSON.stringify([
    event.account_id,
    event.id,
    timestampOf(event),
    event.service_id,
    event.status_code,
    event.duration_ms,
    event.user_id,
    event.user_email,
    event.user_name,
    event.source_ip,
    event.method,
    event.host,
    event.path,
    event.provider,
    event.model,
    event.session_id,
    event.resolved_provider_id,
    event.selected_policy_id,
    event.decision,
    event.deny_reason,
    event.input_tokens,
    event.output_tokens,
    event.total_tokens,
    event.cached_input_tokens,
    event.cache_creation_tokens,
    usdToDecimalText(event.cost_usd),
    usdToDecimalText(event.input_cost_usd),
    usdToDecimalText(event.cached_input_cost_usd),
    usdToDecimalText(event.cache_creation_cost_usd),
    usdToDecimalText(event.output_cost_usd),
    usdToDecimalText(event.cache_cost_usd),
    event.stream,
    event.group_ids,
    // Empty means "not captured"; reads leave the field out then.
    event.request_prompt ?? "",
    event.response_completion ?? "",
    // Empty means "not traced"; reads leave the field out then.
    event.trace_id ?? "",
    // JSON text (infra/clickhouse/009_attempts.sql); empty means one attempt, and reads leave it out.
    event.attempts === undefined || event.attempts.length === 0 ? "" : JSON.stringify(event.attempts),
    // JSON text (infra/clickhouse/011_tool_calls.sql); empty on a model call's row.
    event.tool_call === undefined ? "" : JSON.stringify(event.tool_call),
  ]);
}
