import type { BudgetRule, ConsumptionCounter, Policy } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { capsForCounter, usedShare, windowResetAt } from "./caps";
import { emptyLimits } from "./limits";

const counter = (overrides: Partial<ConsumptionCounter> = {}): ConsumptionCounter => ({
  dimension_kind: "user",
  dimension_id: "u1",
  window_seconds: 3600,
  window_start_utc: "2031-01-01T10:00:00Z",
  tokens_input: 100,
  tokens_output: 50,
  cost_usd: 0.5,
  tool_calls: 0,
  updated_at: "2031-01-01T10:10:00Z",
  ...overrides,
});

const rule = (overrides: Partial<BudgetRule> = {}): BudgetRule => {
  const limits = emptyLimits();
  limits.token_limit = { enabled: true, user_cap: 1000, group_cap: 5000, window_seconds: 3600 };
  return {
    id: "r1",
    name: "daily",
    enabled: true,
    target_groups: [],
    target_users: [],
    limits,
    created_at: "2031-01-01T00:00:00Z",
    updated_at: "2031-01-01T00:00:00Z",
    ...overrides,
  };
};

const policy = (overrides: Partial<Policy> = {}): Policy => {
  const limits = emptyLimits();
  limits.token_limit = { enabled: true, user_cap: 400, group_cap: 0, window_seconds: 3600 };
  limits.budget_limit = { enabled: true, user_cap_usd: 2, group_cap_usd: 10, window_seconds: 3600 };
  return {
    id: "p1",
    name: "eng",
    description: "",
    enabled: true,
    source_groups: ["g-eng"],
    destination_provider_ids: ["prov"],
    guardrail_ids: [],
    mcp_servers: [],
    limits,
    created_at: "2031-01-01T00:00:00Z",
    updated_at: "2031-01-01T00:00:00Z",
    ...overrides,
  };
};

const ctx = (rules: BudgetRule[], policies: Policy[] = []) => ({
  rules,
  policies,
  groupsOfUser: (id: string) => (id === "u1" ? ["g-eng", "g-all"] : ["g-all"]),
});

describe("capsForCounter", () => {
  it("takes an account-wide rule's user cap for a user counter of the same window", () => {
    expect(capsForCounter(counter(), ctx([rule()]))).toEqual({
      tokens: { cap: 1000, source: 'budget rule "daily"' },
    });
  });

  it("ignores disabled rules, other window sizes and rules aimed at someone else", () => {
    const caps = capsForCounter(
      counter(),
      ctx([
        rule({ enabled: false }),
        rule({ target_users: ["u2"] }),
        rule({
          limits: {
            ...rule().limits,
            token_limit: { enabled: true, user_cap: 5, group_cap: 5, window_seconds: 60 },
          },
        }),
      ]),
    );
    expect(caps).toEqual({});
  });

  it("picks the tightest positive cap among rules and policies that cover the user", () => {
    const caps = capsForCounter(counter(), ctx([rule()], [policy()]));
    expect(caps.tokens).toEqual({ cap: 400, source: 'policy "eng"' });
    expect(caps.cost).toEqual({ cap: 2, source: 'policy "eng"' });
  });

  it("uses group caps for group counters; 0 stays uncapped", () => {
    const group = counter({ dimension_kind: "group", dimension_id: "g-eng" });
    const caps = capsForCounter(group, ctx([rule({ target_groups: ["g-eng"] })], [policy()]));
    expect(caps.tokens).toEqual({ cap: 5000, source: 'budget rule "daily"' });
    expect(caps.cost).toEqual({ cap: 10, source: 'policy "eng"' });
    expect(
      capsForCounter(
        counter({ dimension_kind: "group", dimension_id: "g-other" }),
        ctx([rule({ target_groups: ["g-eng"] })]),
      ),
    ).toEqual({});
  });

  it("measures the share used and when the window resets", () => {
    expect(usedShare(150, 1000)).toBeCloseTo(0.15);
    expect(usedShare(2000, 1000)).toBe(1);
    expect(usedShare(5, 0)).toBe(0);
    expect(windowResetAt(counter()).toISOString()).toBe("2031-01-01T11:00:00.000Z");
  });
});
