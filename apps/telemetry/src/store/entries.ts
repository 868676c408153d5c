import { AccessLogEntry, CostTotals, TokenTotals } from "@agentnet/contracts";
import { z } from "zod";
import { ChNumber, ChTimestamp } from "./query";

/** The access_logs columns an entry is read from: the entry's fields (account and user identity stay inside). */
export const ENTRY_COLUMNS = AccessLogEntry.keyof().options.join(", ");

/** Token sums arrive as UInt64 strings, money as Decimal strings: both become numbers here. */
export const tokenNumbers = Object.fromEntries(
  TokenTotals.keyof().options.map((field) => [field, ChNumber]),
) as Record<keyof TokenTotals, typeof ChNumber>;
export const costNumbers = Object.fromEntries(
  CostTotals.keyof().options.map((field) => [field, ChNumber]),
) as Record<keyof CostTotals, typeof ChNumber>;

/** One access_logs row as the API's entry; an empty prompt or completion was not captured. */
export const EntryRow = AccessLogEntry.extend({
  timestamp: ChTimestamp,
  ...tokenNumbers,
  ...costNumbers,
  request_prompt: z.string(),
  response_completion: z.string(),
}).transform(
  ({ request_prompt, response_completion, ...entry }): AccessLogEntry => ({
    ...entry,
    ...(request_prompt === "" ? {} : { request_prompt }),
    ...(response_completion === "" ? {} : { response_completion }),
  }),
);
