import { describe, expect, it } from "vitest";
import { BudgetRule, BudgetRuleBody, capsSomething, isAccountWide } from "./budget-rules";
import { ResourceName } from "./common";
import type { Limits } from "./limits";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeLimits = (): Limits => ({
  token_limit: { enabled: true, group_cap: 1000, user_cap: 100, window_seconds: 3600 },
  budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 0 },
});

const makeBody = (overrides: Record<string, unknown> = {}) => ({
  name: "Engineering monthly",
  enabled: false,
  target_groups: ["grp-eng"],
  target_users: ["usr-1"],
  limits: makeLimits(),
  ...overrides,
});

const makeRule = (overrides: Partial<BudgetRule> = {}): BudgetRule => ({
  id: "rule-1",
  name: "Engineering monthly",
  enabled: true,
  target_groups: [],
  target_users: [],
  limits: makeLimits(),
  created_at: "2025-01-01T00:00:00Z",
  updated_at: "2025-01-01T00:00:00Z",
  ...overrides,
});

describe("BudgetRule", () => {
  it("parses a stored rule", () => {
    expect(BudgetRule.parse(makeRule())).toEqual(makeRule());
  });

  it("requires created_at", () => {
    const { created_at: _dropped, ...rest } = makeRule();
    expect(issuePaths(BudgetRule.safeParse(rest))).toEqual(["created_at"]);
  });
});

describe("BudgetRuleBody", () => {
  it("keeps explicit values", () => {
    expect(BudgetRuleBody.parse(makeBody())).toEqual(makeBody());
  });

  it("defaults enabled to true and the targets to empty", () => {
    const body = BudgetRuleBody.parse({ name: "All", limits: makeLimits() });
    expect(body).toEqual({
      name: "All",
      enabled: true,
      target_groups: [],
      target_users: [],
      limits: makeLimits(),
    });
    expect(isAccountWide(body)).toBe(true);
  });

  it("is not account-wide when it targets a group or a user", () => {
    expect(isAccountWide(BudgetRuleBody.parse(makeBody({ target_users: [] })))).toBe(false);
    expect(isAccountWide(BudgetRuleBody.parse(makeBody({ target_groups: [] })))).toBe(false);
  });

  it.each(["name", "limits"])("requires %s", (field) => {
    const { [field as "name"]: _dropped, ...rest } = makeBody();
    expect(issuePaths(BudgetRuleBody.safeParse(rest))).toEqual([field]);
  });

  it.each(["", "   "])("rejects the empty name %j", (name) => {
    expect(issuePaths(BudgetRuleBody.safeParse(makeBody({ name })))).toEqual(["name"]);
  });

  it("accepts a rule that caps nothing, as the spec does: both limits off, or on with every cap at 0", () => {
    const off = makeLimits();
    const noCap = {
      token_limit: { enabled: true, group_cap: 0, user_cap: 0, window_seconds: 3600 },
      budget_limit: { enabled: false, group_cap_usd: 5, user_cap_usd: 0, window_seconds: 3600 },
    };
    for (const limits of [
      {
        ...off,
        token_limit: { ...off.token_limit, enabled: false, window_seconds: 1 },
        budget_limit: { ...off.budget_limit, enabled: false, window_seconds: 0 },
      },
      noCap,
    ]) {
      const body = BudgetRuleBody.safeParse(makeBody({ limits }));
      expect(issuePaths(body)).toEqual([]);
      expect(capsSomething(limits)).toBe(false);
    }
  });

  it("trims the name", () => {
    expect(ResourceName.parse("  Team caps ")).toBe("Team caps");
  });

  it.each(["a".repeat(201), "bad\u0000name", "line\nbreak", "bell\u0007", "c1\u0085"])(
    "rejects the hostile name %j (too long, control characters)",
    (name) => {
      expect(ResourceName.safeParse(name).success).toBe(false);
    },
  );

  it("requires both members of limits", () => {
    const { budget_limit: _dropped, ...tokenOnly } = makeLimits();
    expect(issuePaths(BudgetRuleBody.safeParse(makeBody({ limits: tokenOnly })))).toEqual([
      "limits.budget_limit",
    ]);
  });

  it("applies the window rule inside limits", () => {
    const limits = { ...makeLimits(), budget_limit: { ...makeLimits().budget_limit, enabled: true } };
    expect(issuePaths(BudgetRuleBody.safeParse(makeBody({ limits })))).toEqual([
      "limits.budget_limit.window_seconds",
    ]);
  });

  it("rejects an empty group id", () => {
    expect(issuePaths(BudgetRuleBody.safeParse(makeBody({ target_groups: ["grp-1", ""] })))).toEqual([
      "target_groups.1",
    ]);
  });

  it("rejects a non-boolean enabled", () => {
    expect(issuePaths(BudgetRuleBody.safeParse(makeBody({ enabled: "yes" })))).toEqual(["enabled"]);
  });

  it("strips response-only fields", () => {
    const body = BudgetRuleBody.parse(makeBody({ id: "x", created_at: "y", updated_at: "z" }));
    expect(Object.keys(body).sort()).toEqual(["enabled", "limits", "name", "target_groups", "target_users"]);
  });
});
