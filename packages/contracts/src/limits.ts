import { z } from "zod";
import { MAX_CAP_USD, MAX_WINDOW_SECONDS } from "./sizes";

/** Shortest window an enabled cap may count over; shorter windows would thrash the counters. */
export const MIN_WINDOW_SECONDS = 60;

const TokenCap = z.number().int().min(0);
const UsdCap = z.number().min(0);
// A disabled limit keeps whatever window the operator typed, so only the sign is checked then.
const WindowSeconds = z.number().int().min(0);
// What a body may write; replies read stored values unbounded, so a row stored before still reads.
const UsdCapBody = UsdCap.max(MAX_CAP_USD, `must be at most ${MAX_CAP_USD} USD`);
const WindowSecondsBody = WindowSeconds.max(
  MAX_WINDOW_SECONDS,
  `must be at most ${MAX_WINDOW_SECONDS} (ten years)`,
);

const windowRule = (value: { enabled: boolean; window_seconds: number }, ctx: z.RefinementCtx) => {
  if (value.enabled && value.window_seconds < MIN_WINDOW_SECONDS) {
    ctx.addIssue({
      code: "too_small",
      origin: "number",
      minimum: MIN_WINDOW_SECONDS,
      inclusive: true,
      input: value.window_seconds,
      path: ["window_seconds"],
      message: `window_seconds must be at least ${MIN_WINDOW_SECONDS} when the limit is enabled`,
    });
  }
};

const tokenLimit = (window: z.ZodNumber) =>
  z
    .object({ enabled: z.boolean(), group_cap: TokenCap, user_cap: TokenCap, window_seconds: window })
    .superRefine(windowRule);

const budgetLimit = (usdCap: z.ZodNumber, window: z.ZodNumber) =>
  z
    .object({ enabled: z.boolean(), group_cap_usd: usdCap, user_cap_usd: usdCap, window_seconds: window })
    .superRefine(windowRule);

/** Token caps per window; 0 means uncapped. group_cap is a bucket per source group, user_cap per user. */
export const TokenLimit = tokenLimit(WindowSeconds);
export type TokenLimit = z.infer<typeof TokenLimit>;

/** USD caps per window; 0 means uncapped. */
export const BudgetLimit = budgetLimit(UsdCap, WindowSeconds);
export type BudgetLimit = z.infer<typeof BudgetLimit>;

/**
 * MCP tool calls per window (`tools/call` the server answered); 0 means uncapped. Model calls never
 * count on it, and it never refuses one.
 */
export const ToolCallLimit = tokenLimit(WindowSeconds);
export type ToolCallLimit = z.infer<typeof ToolCallLimit>;

/**
 * Shared by budget rules and policies; token_limit and budget_limit are required whenever limits is
 * sent, tool_call_limit (an agentnet extension, docs/API.md "Limits") may be left out.
 */
export const Limits = z.object({
  token_limit: TokenLimit,
  budget_limit: BudgetLimit,
  tool_call_limit: ToolCallLimit.optional(),
});
export type Limits = z.infer<typeof Limits>;

/** Limits as a body writes them: USD caps up to MAX_CAP_USD, windows up to MAX_WINDOW_SECONDS. */
export const LimitsBody = z.object({
  token_limit: tokenLimit(WindowSecondsBody),
  budget_limit: budgetLimit(UsdCapBody, WindowSecondsBody),
  tool_call_limit: tokenLimit(WindowSecondsBody).optional(),
});
