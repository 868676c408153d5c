import { AccessLogEntry, CostTotals, TokenTotals } from "@agentnet/contracts";
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
});

/** The API's entry from its columns (prompt and completion only when captured). */
export const toEntry = ({
  request_prompt,
  response_completion,
  ...entry
}: z.output<typeof EntryColumns>): AccessLogEntry => ({
  ...entry,
  ...(request_prompt === "" ? {} : { request_prompt }),
  ...(response_completion === "" ? {} : { response_completion }),
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
