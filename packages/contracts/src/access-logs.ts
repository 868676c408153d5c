import { z } from "zod";
import { repeatable, Timestamp } from "./common";
import { MAX_ATTEMPTS_LISTED, RequestAttempt } from "./routing";

const TokenCount = z.number().int().min(0);
const Usd = z.number().min(0);

/** Token counts, shared by entries, sessions and usage buckets. */
export const TokenTotals = z.object({
  input_tokens: TokenCount,
  output_tokens: TokenCount,
  total_tokens: TokenCount,
  cached_input_tokens: TokenCount,
  cache_creation_tokens: TokenCount,
});
export type TokenTotals = z.infer<typeof TokenTotals>;

/** USD amounts; cache_cost_usd = cached_input_cost_usd + cache_creation_cost_usd. */
export const CostTotals = z.object({
  cost_usd: Usd,
  input_cost_usd: Usd,
  cached_input_cost_usd: Usd,
  cache_creation_cost_usd: Usd,
  output_cost_usd: Usd,
  cache_cost_usd: Usd,
});
export type CostTotals = z.infer<typeof CostTotals>;

/**
 * Not in the spec: the MCP tool call an entry stands for (docs/API.md "MCP gateway"). Such an entry's
 * provider is `mcp` and its model `{server}__{tool}`; this names them apart and says how much
 * travelled each way (the JSON-RPC request the client sent, the answer it got).
 */
export const McpToolCall = z.object({
  server_id: z.string(),
  server: z.string(),
  tool: z.string(),
  request_bytes: z.number().int().min(0),
  response_bytes: z.number().int().min(0),
});
export type McpToolCall = z.infer<typeof McpToolCall>;

/** One gateway request. source_ip, host and path are empty when log collection is disabled. */
export const AccessLogEntry = z.object({
  id: z.string(),
  service_id: z.string(),
  timestamp: Timestamp,
  status_code: z.number().int(),
  duration_ms: z.number().int().min(0),
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
  /** Raw reason code when blocked, e.g. llm_policy.token_cap_exceeded. */
  deny_reason: z.string(),
  ...TokenTotals.shape,
  ...CostTotals.shape,
  stream: z.boolean(),
  group_ids: z.array(z.string()),
  /** Present only when prompt collection is enabled. */
  request_prompt: z.string().optional(),
  response_completion: z.string().optional(),
  /**
   * The OpenTelemetry trace the request's spans are in (docs/ARCHITECTURE.md, "Tracing"). Optional:
   * present only when the gateway exported the request's trace (tracing is off by default, traces
   * may be sampled), and request events published before it lack it.
   */
  trace_id: z.string().optional(),
  /**
   * Not in the spec: every attempt at a provider, in order, when the request took more than one
   * (a retry or a fallback); the row's provider, model, usage and cost are the last attempt's.
   * Absent for a request that took one attempt, and in events of builds before routing.
   */
  attempts: z.array(RequestAttempt).max(MAX_ATTEMPTS_LISTED).optional(),
  /** Present only on an MCP tool call's entry; events of builds before the MCP gateway lack it. */
  tool_call: McpToolCall.optional(),
});
export type AccessLogEntry = z.infer<typeof AccessLogEntry>;

/**
 * An entry as the reads answer it. Every answer is one bus message, so a list carries a preview of
 * each captured text (docs/API.md, "Prompt previews"); a text cut short is flagged, and
 * `GET /access-logs/{logId}` answers it whole. Only present (true) when cut.
 */
export const AccessLogEntryView = AccessLogEntry.extend({
  request_prompt_truncated: z.boolean().optional(),
  response_completion_truncated: z.boolean().optional(),
});
export type AccessLogEntryView = z.infer<typeof AccessLogEntryView>;

/** Requests without a session id each form their own singleton session. */
export const AccessLogSession = z.object({
  session_id: z.string(),
  user_id: z.string(),
  group_ids: z.array(z.string()),
  started_at: Timestamp,
  ended_at: Timestamp,
  request_count: z.number().int().min(0),
  ...TokenTotals.shape,
  ...CostTotals.shape,
  providers: z.array(z.string()),
  models: z.array(z.string()),
  decision: z.string(),
  /** The first entries, oldest first, as many as fit the answer; request_count tells how many there are. */
  entries: z.array(AccessLogEntryView),
});
export type AccessLogSession = z.infer<typeof AccessLogSession>;

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;

/** A page of results as the list endpoints answer it. */
export const Paginated = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    page: z.number().int().min(1),
    page_size: z.number().int().min(1),
    total_records: z.number().int().min(0),
    total_pages: z.number().int().min(0),
  });
export type Paginated<T> = {
  data: T[];
  page: number;
  page_size: number;
  total_records: number;
  total_pages: number;
};

export const AccessLogPage = Paginated(AccessLogEntryView);
export type AccessLogPage = z.infer<typeof AccessLogPage>;
export const AccessLogSessionPage = Paginated(AccessLogSession);
export type AccessLogSessionPage = z.infer<typeof AccessLogSessionPage>;

// Query values arrive as text; an empty one (`?user_id=`) is a form left blank, not a filter.
const QueryText = z
  .string()
  .trim()
  .transform((v) => (v === "" ? undefined : v))
  .optional();

/**
 * An optional RFC 3339 query value. An unencoded `+` in the offset arrives decoded as a space
 * (`2024-01-01T00:00:00 02:00`); it is put back before validating. Empty means not given.
 */
export const QueryTimestamp = z
  .preprocess((v) => {
    if (typeof v !== "string") return v;
    const text = v.trim();
    return text === "" ? undefined : text.replace(/ (\d{2}:?\d{2})$/, "+$1");
  }, Timestamp.optional())
  .optional();

const SortOrder = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(["ascending", "descending", "asc", "desc"]))
  .transform((v): "ascending" | "descending" =>
    v === "asc" || v === "ascending" ? "ascending" : "descending",
  )
  .default("descending")
  // What the OpenAPI document shows: the canonical values (the short forms are accepted too).
  .meta({ enum: ["ascending", "descending"], description: "ascending or descending (asc, desc, any case)" });

/** Filters shared by the log, session and usage reads. */
export const UsageFilters = z.object({
  start_date: QueryTimestamp,
  end_date: QueryTimestamp,
  user_id: QueryText,
  session_id: QueryText,
  group_id: repeatable(z.string()).optional(),
  provider_id: repeatable(z.string()).optional(),
  model: repeatable(z.string()).optional(),
});
export type UsageFilters = z.infer<typeof UsageFilters>;

/** A window whose end precedes its start is a caller mistake, not an empty result. */
export const dateRangeRule = (query: { start_date?: string; end_date?: string }, ctx: z.RefinementCtx) => {
  if (query.start_date === undefined || query.end_date === undefined) return;
  if (Date.parse(query.end_date) < Date.parse(query.start_date)) {
    ctx.addIssue({ code: "custom", path: ["end_date"], message: "end_date must not be before start_date" });
  }
};

const listQueryShape = {
  ...UsageFilters.shape,
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  sort_order: SortOrder,
  /** Matches log id, host, path, model, user email or name. */
  search: QueryText,
  /** For example allow or deny. */
  decision: QueryText,
  /** Prefix match. */
  path: QueryText,
};

/** Entry fields a log list can be ordered by (lists and prompt text are not orderable). */
export const AccessLogSortField = AccessLogEntry.keyof().exclude([
  "group_ids",
  "request_prompt",
  "response_completion",
  "attempts",
  "tool_call",
]);
export type AccessLogSortField = z.infer<typeof AccessLogSortField>;

export const AccessLogQuery = z
  .object({ ...listQueryShape, sort_by: AccessLogSortField.default("timestamp") })
  .superRefine(dateRangeRule);
export type AccessLogQuery = z.infer<typeof AccessLogQuery>;

/** Session fields a session list can be ordered by; timestamp is the last activity (ended_at). */
export const AccessLogSessionSortField = z.enum([
  "timestamp",
  "started_at",
  "ended_at",
  "session_id",
  "user_id",
  "request_count",
  "decision",
  ...TokenTotals.keyof().options,
  ...CostTotals.keyof().options,
]);
export type AccessLogSessionSortField = z.infer<typeof AccessLogSessionSortField>;

/** Same filters as the log list; the page unit is a session. */
export const AccessLogSessionQuery = z
  .object({ ...listQueryShape, sort_by: AccessLogSessionSortField.default("timestamp") })
  .superRefine(dateRangeRule);
export type AccessLogSessionQuery = z.infer<typeof AccessLogSessionQuery>;
