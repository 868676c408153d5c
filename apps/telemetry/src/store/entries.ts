import { AccessLogEntry, type AccessLogEntryView, CostTotals, TokenTotals } from "@agentnet/contracts";
import { z } from "zod";
import { ChNumber, ChTimestamp } from "./query";

/** The access_logs columns an entry is read from: the entry's fields (account and user identity stay inside). */
export const ENTRY_FIELDS = AccessLogEntry.keyof().options;
export const ENTRY_COLUMNS = ENTRY_FIELDS.join(", ");

/** Token sums arrive as UInt64 strings, money as Decimal strings: both become numbers here. */
export const tokenNumbers = Object.fromEntries(
  TokenTotals.keyof().options.map((field) => [field, ChNumber]),
) as Record<keyof TokenTotals, typeof ChNumber>;
export const costNumbers = Object.fromEntries(
  CostTotals.keyof().options.map((field) => [field, ChNumber]),
) as Record<keyof CostTotals, typeof ChNumber>;

const USAGE_TOTALS = [...TokenTotals.keyof().options, ...CostTotals.keyof().options];
/** The token and cost columns, as a select list. */
export const USAGE_COLUMNS = USAGE_TOTALS.join(", ");
/** Every token and cost total summed under its own name (usage buckets, usage_hourly). */
export const USAGE_SUMS = USAGE_TOTALS.map((field) => `sum(${field}) AS ${field}`).join(", ");

/**
 * The attempts column (infra/clickhouse/009_attempts.sql): the list as JSON text, empty when the
 * request took one attempt; the entry then has none.
 */
const AttemptsColumn = z
  .string()
  .transform((text): unknown => (text === "" ? undefined : JSON.parse(text)))
  .pipe(AccessLogEntry.shape.attempts);

/** The tool_call column (infra/clickhouse/011_tool_calls.sql): JSON text, empty on a model call's row. */
const ToolCallColumn = z
  .string()
  .transform((text): unknown => (text === "" ? undefined : JSON.parse(text)))
  .pipe(AccessLogEntry.shape.tool_call);

/**
 * One access_logs row's entry columns as they arrive; an empty prompt or completion was not
 * captured. A row with more columns extends this object (`EntryColumns.extend`) rather than
 * intersecting it with `.and()`: zod merges an intersection's two results field by field, which
 * made parsing a sessions page's entries cost as much as its query.
 */
export const EntryColumns = AccessLogEntry.extend({
  timestamp: ChTimestamp,
  ...tokenNumbers,
  ...costNumbers,
  request_prompt: z.string(),
  response_completion: z.string(),
  trace_id: z.string(),
  attempts: AttemptsColumn,
  tool_call: ToolCallColumn,
});

/**
 * The API's entry from its columns (prompt and completion only when captured, the trace only when
 * traced, the attempts only when there were several).
 */
export const toEntry = ({
  request_prompt,
  response_completion,
  trace_id,
  attempts,
  tool_call,
  ...entry
}: z.output<typeof EntryColumns>): AccessLogEntry => ({
  ...entry,
  ...(request_prompt === "" ? {} : { request_prompt }),
  ...(response_completion === "" ? {} : { response_completion }),
  ...(trace_id === "" ? {} : { trace_id }),
  ...(attempts === undefined ? {} : { attempts }),
  ...(tool_call === undefined ? {} : { tool_call }),
});

/** What a list reads of a captured text: its first code points, and whether the stored text is longer. */
const preview = (text: string) => [
  [`${text}_preview`, `substringUTF8(${text}, 1, {preview_chars:UInt32})`],
  [`${text}_cut`, `lengthUTF8(${text}) > {preview_chars:UInt32}`],
];

/**
 * The columns a list reads of an entry: every entry column, except that of the prompt and the
 * completion only their first {preview_chars} code points come out of the store (a page's reply
 * carries no more of them; domain/reply-budget.ts sizes it), so a page of long prompts never
 * passes through telemetry whole. As [name, expression] pairs.
 */
const LIST_COLUMNS = ENTRY_FIELDS.flatMap((field) =>
  field === "request_prompt" || field === "response_completion" ? preview(field) : [[field, field]],
);
/** The list columns as a select list. */
export const LIST_SELECT = LIST_COLUMNS.map(([name, sql]) =>
  name === sql ? name : `${sql} AS ${name}`,
).join(", ");
/** The list columns as one tuple (a session's entries are read as an array of them), and its field names. */
export const LIST_TUPLE = `(${LIST_COLUMNS.map(([, sql]) => sql).join(", ")})`;
export const LIST_FIELDS = LIST_COLUMNS.map(([name]) => name);

/** One entry's list columns as they arrive. */
export const ListColumns = AccessLogEntry.omit({ request_prompt: true, response_completion: true }).extend({
  timestamp: ChTimestamp,
  ...tokenNumbers,
  ...costNumbers,
  request_prompt_preview: z.string(),
  request_prompt_cut: ChNumber,
  response_completion_preview: z.string(),
  response_completion_cut: ChNumber,
  trace_id: z.string(),
  attempts: AttemptsColumn,
  tool_call: ToolCallColumn,
});

/**
 * The API's entry from its list columns: a text absent when not captured (empty), flagged when the
 * store holds more than its preview (a preview is never empty: at least one code point is read).
 */
export const toListEntry = ({
  request_prompt_preview,
  request_prompt_cut,
  response_completion_preview,
  response_completion_cut,
  trace_id,
  attempts,
  tool_call,
  ...entry
}: z.output<typeof ListColumns>): AccessLogEntryView => ({
  ...entry,
  ...(trace_id === "" ? {} : { trace_id }),
  ...(attempts === undefined ? {} : { attempts }),
  ...(tool_call === undefined ? {} : { tool_call }),
  ...(request_prompt_preview === "" ? {} : { request_prompt: request_prompt_preview }),
  ...(request_prompt_cut > 0 ? { request_prompt_truncated: true } : {}),
  ...(response_completion_preview === "" ? {} : { response_completion: response_completion_preview }),
  ...(response_completion_cut > 0 ? { response_completion_truncated: true } : {}),
});

/*
 * A request's outcome as analytics count it (infra/clickhouse/007_analytics.sql): denied when the
 * gateway denied it; an error when it was not denied and answered 400 or above (upstream failures,
 * bad requests); its duration counts for latency only when allowed (a denial reached no upstream).
 */
const DENIED = "decision = 'deny'";
const ERROR = "decision != 'deny' AND status_code >= 400";
const ALLOWED = "decision = 'allow'";
/**
 * The levels of usage_hourly's `latency_ms` state, `AggregateFunction(quantilesTDigest(0.5, 0.95),
 * UInt32)`: every state and merge of it names the same ones.
 */
export const LATENCY_LEVELS = "0.5, 0.95";

/** Requests, errors and denials of usage_events rows, and the latency state of the allowed ones. */
export const OUTCOME_SUMS = `count() AS requests, countIf(${ERROR}) AS errors, countIf(${DENIED}) AS denied,
  quantilesTDigestStateIf(${LATENCY_LEVELS})(duration_ms, ${ALLOWED}) AS latency_ms`;
