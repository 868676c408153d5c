import type { Limits } from "@agentnet/contracts";

/** The API's shortest window for an enabled cap (packages/contracts MIN_WINDOW_SECONDS). */
export const MIN_WINDOW_SECONDS = 60;

/** Field path inside a limits object (as the API's details name it) → message. */
export type LimitsErrors = Record<string, string>;

/** What a fresh limits editor shows: both parts off, hourly windows. */
export const emptyLimits = (): Limits => ({
  token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600 },
  budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
});

const capError = (value: number, wholeUnit?: "tokens" | "calls"): string | undefined => {
  if (!Number.isFinite(value)) return "enter a number";
  if (value < 0) return "must be 0 or more (0 means uncapped)";
  if (wholeUnit && !Number.isInteger(value)) return `must be a whole number of ${wholeUnit}`;
  return undefined;
};

const windowError = (enabled: boolean, value: number): string | undefined => {
  if (!Number.isFinite(value) || !Number.isInteger(value)) return "must be a whole number of seconds";
  if (value < 0) return "must be 0 or more";
  if (enabled && value < MIN_WINDOW_SECONDS)
    return `must be at least ${MIN_WINDOW_SECONDS} seconds when the limit is enabled`;
  return undefined;
};

/**
 * The same rules the API applies to a limits object, checked before submit: caps >= 0 (token and
 * tool-call caps whole numbers), window_seconds >= 60 when the limit is enabled. Empty result means valid.
 */
export function validateLimits(limits: Limits, prefix = ""): LimitsErrors {
  const errors: LimitsErrors = {};
  const put = (path: string, message: string | undefined) => {
    if (message) errors[`${prefix}${path}`] = message;
  };
  const { token_limit: t, budget_limit: b } = limits;
  put("token_limit.group_cap", capError(t.group_cap, "tokens"));
  put("token_limit.user_cap", capError(t.user_cap, "tokens"));
  put("token_limit.window_seconds", windowError(t.enabled, t.window_seconds));
  put("budget_limit.group_cap_usd", capError(b.group_cap_usd));
  put("budget_limit.user_cap_usd", capError(b.user_cap_usd));
  put("budget_limit.window_seconds", windowError(b.enabled, b.window_seconds));
  const c = limits.tool_call_limit;
  if (c) {
    put("tool_call_limit.group_cap", capError(c.group_cap, "calls"));
    put("tool_call_limit.user_cap", capError(c.user_cap, "calls"));
    put("tool_call_limit.window_seconds", windowError(c.enabled, c.window_seconds));
  }
  return errors;
}

/** A number typed into a form field; blank is NaN so validation can name it. */
export const parseNumberField = (text: string): number => (text.trim() === "" ? Number.NaN : Number(text));
