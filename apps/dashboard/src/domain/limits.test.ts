import { describe, expect, it } from "vitest";
import { emptyLimits, parseNumberField, validateLimits } from "./limits";

describe("validateLimits", () => {
  it("accepts disabled limits with any non-negative window, and enabled ones from 60 s", () => {
    expect(validateLimits(emptyLimits())).toEqual({});
    const limits = emptyLimits();
    limits.token_limit = { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 0 };
    limits.budget_limit = { enabled: true, group_cap_usd: 1.5, user_cap_usd: 0, window_seconds: 60 };
    expect(validateLimits(limits)).toEqual({});
  });

  it("refuses an enabled window under 60 seconds, naming the field as the API does", () => {
    const limits = emptyLimits();
    limits.token_limit = { enabled: true, group_cap: 10, user_cap: 10, window_seconds: 59 };
    expect(validateLimits(limits, "limits.")).toEqual({
      "limits.token_limit.window_seconds": "must be at least 60 seconds when the limit is enabled",
    });
  });

  it("refuses negative caps, fractional token caps and blanks", () => {
    const limits = emptyLimits();
    limits.token_limit = { enabled: true, group_cap: -1, user_cap: 2.5, window_seconds: 3600 };
    limits.budget_limit = {
      enabled: false,
      group_cap_usd: Number.NaN,
      user_cap_usd: -0.01,
      window_seconds: 30.5,
    };
    expect(Object.keys(validateLimits(limits)).sort()).toEqual([
      "budget_limit.group_cap_usd",
      "budget_limit.user_cap_usd",
      "budget_limit.window_seconds",
      "token_limit.group_cap",
      "token_limit.user_cap",
    ]);
  });

  it("reads a blank number field as missing, not zero", () => {
    expect(parseNumberField("")).toBeNaN();
    expect(parseNumberField(" 12 ")).toBe(12);
  });
});
