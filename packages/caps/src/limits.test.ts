import type { Limits } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { planCounters } from "./counters";
import { applicableLimits, type CapRule, type CapsInput, denyReason } from "./limits";
import { retryAfterSeconds, windowStart } from "./windows";

let ids = 0;
const id = (prefix: string) => `${prefix}-${++ids}`;

const makeLimits = (token_limit?: Partial<Limits["token_limit"]>): Limits => ({
  token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600, ...token_limit },
  budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
});
const makeRule = (overrides: Partial<CapRule> = {}): CapRule => ({
  id: id("rule"),
  enabled: true,
  target_groups: [],
  target_users: [],
  limits: makeLimits(),
  ...overrides,
});
const makeReserve = (overrides: Partial<CapsInput> = {}) => {
  const group = overrides.group_ids?.[0] ?? id("grp");
  return {
    account_id: id("acc"),
    user_id: id("usr"),
    group_ids: [group],
    policy: { id: id("pol"), source_groups: [group] },
    budget_rules: [] as CapRule[],
    ...overrides,
  };
};

const tokens = (user_cap: number, group_cap: number, window_seconds = 3600) =>
  makeLimits({ enabled: true, user_cap, group_cap, window_seconds });

describe("windowStart", () => {
  it("aligns windows to the Unix epoch", () => {
    expect(windowStart(3599, 3600)).toBe(0);
    expect(windowStart(3600, 3600)).toBe(3600);
    expect(windowStart(1_700_000_123, 86_400)).toBe(1_699_920_000);
  });

  it("says how long until the window starts over", () => {
    expect(retryAfterSeconds(3_000_500, 0, 3600)).toBe(600);
  });
});

describe("applicableLimits", () => {
  it("charges group caps to the caller's groups among the policy's source groups", () => {
    const base = makeReserve({ group_ids: ["all", "eng", "ops"] });
    const request = { ...base, policy: { id: "p", source_groups: ["eng", "sales"], limits: tokens(10, 20) } };
    const checks = applicableLimits(request);
    expect(checks.map((c) => [c.dimension_kind, c.dimension_id, c.cap])).toEqual([
      ["user", base.user_id, 10],
      ["group", "eng", 20],
    ]);
  });

  it("charges a group-targeted rule to the targeted groups the caller is in", () => {
    const base = makeReserve({ group_ids: ["all", "eng"] });
    const rule = makeRule({ target_groups: ["eng", "ops"], limits: tokens(0, 5) });
    const checks = applicableLimits({ ...base, budget_rules: [rule] });
    expect(checks.filter((c) => c.dimension_kind === "group").map((c) => c.dimension_id)).toEqual(["eng"]);
  });

  it("leaves disabled limits and disabled rules out entirely", () => {
    const base = makeReserve();
    const rules = [makeRule({ enabled: false, limits: tokens(1, 1) }), makeRule({ limits: makeLimits() })];
    expect(applicableLimits({ ...base, budget_rules: rules })).toEqual([]);
  });

  it("merges checks on one counter and keeps the tightest non-zero cap", () => {
    const base = makeReserve();
    const request = {
      ...base,
      policy: { ...base.policy, limits: tokens(500, 0) },
      budget_rules: [makeRule({ limits: tokens(200, 0) }), makeRule({ limits: tokens(0, 0) })],
    };
    const plans = planCounters(base.account_id, applicableLimits(request), 0);
    const user = plans.find((plan) => plan.key.dimension_kind === "user");
    expect(user?.capTokens).toBe(200);
    expect(user?.checks).toHaveLength(3);
    expect(plans.find((plan) => plan.key.dimension_kind === "group")?.capTokens).toBeUndefined();
  });

  it("caps tool calls on the counters of the tokens' window, beside the tokens", () => {
    const base = makeReserve();
    const toolCalls = { enabled: true, user_cap: 3, group_cap: 10, window_seconds: 3600 };
    const limits: Limits = { ...tokens(500, 0), tool_call_limit: toolCalls };
    const checks = applicableLimits({ ...base, policy: { ...base.policy, limits } });
    expect(checks.filter((c) => c.measure === "calls").map((c) => [c.dimension_kind, c.cap])).toEqual([
      ["user", 3],
      ["group", 10],
    ]);
    const plans = planCounters(base.account_id, checks, 0);
    const user = plans.find((plan) => plan.key.dimension_kind === "user");
    expect([user?.capTokens, user?.capCalls]).toEqual([500, 3]);
    const disabled = { ...limits, tool_call_limit: { ...toolCalls, enabled: false } };
    const left = applicableLimits({ ...base, policy: { ...base.policy, limits: disabled } });
    expect(left.map((check) => check.measure)).toEqual(["tokens", "tokens"]);
  });

  it("names deny reasons after the source and the measure", () => {
    expect(denyReason({ source: "llm_policy", measure: "cost" })).toBe("llm_policy.budget_cap_exceeded");
    expect(denyReason({ source: "budget_rule", measure: "tokens" })).toBe("budget_rule.token_cap_exceeded");
    expect(denyReason({ source: "llm_policy", measure: "calls" })).toBe("llm_policy.tool_call_cap_exceeded");
  });
});
