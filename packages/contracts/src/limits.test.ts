import { describe, expect, it } from "vitest";
import { BudgetLimit, Limits, TokenLimit } from "./limits";

const makeTokenLimit = (overrides: Partial<TokenLimit> = {}): TokenLimit => ({
  enabled: true,
  group_cap: 100_000,
  user_cap: 10_000,
  window_seconds: 3600,
  ...overrides,
});

const makeBudgetLimit = (overrides: Partial<BudgetLimit> = {}): BudgetLimit => ({
  enabled: true,
  group_cap_usd: 50,
  user_cap_usd: 5.5,
  window_seconds: 86_400,
  ...overrides,
});

const makeLimits = (overrides: Partial<Limits> = {}): Limits => ({
  token_limit: makeTokenLimit(),
  budget_limit: makeBudgetLimit(),
  ...overrides,
});

const issuePaths = (result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

describe("Limits", () => {
  it("parses a complete limits object", () => {
    expect(Limits.parse(makeLimits())).toEqual(makeLimits());
  });

  it.each(["token_limit", "budget_limit"] as const)("requires %s", (member) => {
    const { [member]: _dropped, ...rest } = makeLimits();
    expect(issuePaths(Limits.safeParse(rest))).toEqual([member]);
  });

  it.each(["enabled", "group_cap", "user_cap", "window_seconds"] as const)(
    "requires token_limit.%s",
    (field) => {
      const { [field]: _dropped, ...rest } = makeTokenLimit();
      expect(issuePaths(Limits.safeParse(makeLimits({ token_limit: rest as TokenLimit })))).toEqual([
        `token_limit.${field}`,
      ]);
    },
  );

  it.each(["enabled", "group_cap_usd", "user_cap_usd", "window_seconds"] as const)(
    "requires budget_limit.%s",
    (field) => {
      const { [field]: _dropped, ...rest } = makeBudgetLimit();
      expect(issuePaths(Limits.safeParse(makeLimits({ budget_limit: rest as BudgetLimit })))).toEqual([
        `budget_limit.${field}`,
      ]);
    },
  );
  it("takes an optional tool-call limit with whole caps and the enabled window rule", () => {
    const tool_call_limit = { enabled: true, group_cap: 100, user_cap: 20, window_seconds: 3600 };
    expect(Limits.parse(makeLimits({ tool_call_limit }))).toEqual(makeLimits({ tool_call_limit }));
    expect(
      issuePaths(Limits.safeParse(makeLimits({ tool_call_limit: { ...tool_call_limit, user_cap: 1.5 } }))),
    ).toEqual(["tool_call_limit.user_cap"]);
    expect(
      issuePaths(
        Limits.safeParse(makeLimits({ tool_call_limit: { ...tool_call_limit, window_seconds: 30 } })),
      ),
    ).toEqual(["tool_call_limit.window_seconds"]);
  });
});

describe("TokenLimit caps", () => {
  it("accepts 0 as uncapped", () => {
    expect(TokenLimit.safeParse(makeTokenLimit({ group_cap: 0, user_cap: 0 })).success).toBe(true);
  });

  it.each(["group_cap", "user_cap"] as const)("rejects a negative %s", (field) => {
    expect(issuePaths(TokenLimit.safeParse(makeTokenLimit({ [field]: -1 })))).toEqual([field]);
  });

  it.each(["group_cap", "user_cap"] as const)("rejects a fractional %s", (field) => {
    expect(issuePaths(TokenLimit.safeParse(makeTokenLimit({ [field]: 1.5 })))).toEqual([field]);
  });
});

describe("BudgetLimit caps", () => {
  it("accepts 0 and fractional USD", () => {
    expect(BudgetLimit.safeParse(makeBudgetLimit({ group_cap_usd: 0, user_cap_usd: 0.25 })).success).toBe(
      true,
    );
  });

  it.each(["group_cap_usd", "user_cap_usd"] as const)("rejects a negative %s", (field) => {
    expect(issuePaths(BudgetLimit.safeParse(makeBudgetLimit({ [field]: -0.01 })))).toEqual([field]);
  });

  it("rejects a non-finite cap", () => {
    expect(
      issuePaths(BudgetLimit.safeParse(makeBudgetLimit({ user_cap_usd: Number.POSITIVE_INFINITY }))),
    ).toEqual(["user_cap_usd"]);
  });
});

describe.each([
  ["token_limit", TokenLimit, makeTokenLimit],
  ["budget_limit", BudgetLimit, makeBudgetLimit],
] as const)("%s window_seconds", (_name, schema, make) => {
  it("accepts exactly 60 when enabled", () => {
    expect(schema.safeParse(make({ enabled: true, window_seconds: 60 })).success).toBe(true);
  });

  it("rejects less than 60 when enabled, on window_seconds", () => {
    const result = schema.safeParse(make({ enabled: true, window_seconds: 59 }));
    expect(issuePaths(result)).toEqual(["window_seconds"]);
  });

  it("accepts any non-negative integer when disabled", () => {
    expect(schema.safeParse(make({ enabled: false, window_seconds: 0 })).success).toBe(true);
    expect(schema.safeParse(make({ enabled: false, window_seconds: 5 })).success).toBe(true);
  });

  it("rejects a negative window even when disabled", () => {
    expect(issuePaths(schema.safeParse(make({ enabled: false, window_seconds: -1 })))).toEqual([
      "window_seconds",
    ]);
  });

  it("rejects a fractional window", () => {
    expect(issuePaths(schema.safeParse(make({ window_seconds: 90.5 })))).toEqual(["window_seconds"]);
  });
});

it("points the nested window rule at limits.<member>.window_seconds", () => {
  const result = Limits.safeParse(makeLimits({ budget_limit: makeBudgetLimit({ window_seconds: 30 }) }));
  expect(issuePaths(result)).toEqual(["budget_limit.window_seconds"]);
});
