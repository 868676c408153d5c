import { type AccessLogEntry, CostTotals, TokenTotals } from "@agentnet/contracts";
import { z } from "zod";
import { ChNumber, ChTimestamp } from "./query";

/** The access_logs columns an entry is read from (account and user identity stay inside). */
export const ENTRY_COLUMNS = `id, service_id, timestamp, status_code, duration_ms, user_id, source_ip, method,
  host, path, provider, model, session_id, resolved_provider_id, selected_policy_id, decision, deny_reason,
  input_tokens, output_tokens, total_tokens, cached_input_tokens, cache_creation_tokens,
  cost_usd, input_cost_usd, cached_input_cost_usd, cache_creation_cost_usd, output_cost_usd, cache_cost_usd,
  stream, group_ids, request_prompt, response_completion`;

/** Token sums arrive as UInt64 strings, money as Decimal strings: both become numbers here. */
export const tokenNumbers = Object.fromEntries(
  TokenTotals.keyof().options.map((field) => [field, ChNumber]),
) as Record<keyof TokenTotals, typeof ChNumber>;
export const costNumbers = Object.fromEntries(
  CostTotals.keyof().options.map((field) => [field, ChNumber]),
) as Record<keyof CostTotals, typeof ChNumber>;

/** One access_logs row as the API's entry; an empty prompt or completion was not captured. */
export const EntryRow = z
  .object({
    id: z.string(),
    service_id: z.string(),
    timestamp: ChTimestamp,
    status_code: z.number().int(),
    duration_ms: z.number().int(),
    user_id: z.string(),
    source_ip: z.string(),
    method: z.string(),
    host: z.string(),
    path: z.string(),
    provider: z.string(),
    model: z.string(),
    session_id: z.string(),
    resolved_provider_id: z.string(),
    selected_policy_id: z.string(),
    decision: z.string(),
    deny_reason: z.string(),
    ...tokenNumbers,
    ...costNumbers,
    stream: z.boolean(),
    group_ids: z.array(z.string()),
    request_prompt: z.string(),
    response_completion: z.string(),
  })
  .transform(
    ({ request_prompt, response_completion, ...entry }): AccessLogEntry => ({
      ...entry,
      ...(request_prompt === "" ? {} : { request_prompt }),
      ...(response_completion === "" ? {} : { response_completion }),
    }),
  );
