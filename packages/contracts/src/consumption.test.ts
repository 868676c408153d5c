import { describe, expect, it } from "vitest";
import { ConsumptionCounter, DimensionKind, ReservedCounter } from "./consumption";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeCounter = (overrides: Record<string, unknown> = {}) => ({
  dimension_kind: "group",
  dimension_id: "grp-eng",
  window_seconds: 3600,
  window_start_utc: "2025-01-01T10:00:00Z",
  tokens_input: 1200,
  tokens_output: 300,
  cost_usd: 0.0123,
  updated_at: "2025-01-01T10:12:00Z",
  ...overrides,
});

describe("DimensionKind", () => {
  it.each(["user", "group"])("accepts %s", (kind) => {
    expect(DimensionKind.safeParse(kind).success).toBe(true);
  });

  it("rejects anything else", () => {
    expect(DimensionKind.safeParse("account").success).toBe(false);
  });
});

describe("ReservedCounter", () => {
  const reserved = {
    dimension_kind: "user",
    dimension_id: "usr-1",
    window_seconds: 3600,
    window_start: 1_924_984_800,
  };

  it("parses a counter a reservation holds", () => {
    expect(ReservedCounter.parse(reserved)).toEqual(reserved);
  });

  it.each([
    ["window_seconds", 0],
    ["window_start", 1.5],
    ["dimension_id", ""],
  ])("rejects %s = %s", (field, value) => {
    expect(issuePaths(ReservedCounter.safeParse({ ...reserved, [field]: value }))).toEqual([field]);
  });
});

describe("ConsumptionCounter", () => {
  it("parses a counter", () => {
    expect(ConsumptionCounter.parse(makeCounter())).toEqual({ ...makeCounter(), tool_calls: 0 });
  });

  it("rejects an unknown dimension kind", () => {
    expect(issuePaths(ConsumptionCounter.safeParse(makeCounter({ dimension_kind: "team" })))).toEqual([
      "dimension_kind",
    ]);
  });

  it.each(["tokens_input", "tokens_output"])("rejects a fractional %s", (field) => {
    expect(issuePaths(ConsumptionCounter.safeParse(makeCounter({ [field]: 1.5 })))).toEqual([field]);
  });

  it("rejects a zero window", () => {
    expect(issuePaths(ConsumptionCounter.safeParse(makeCounter({ window_seconds: 0 })))).toEqual([
      "window_seconds",
    ]);
  });

  it("rejects a window start that is not RFC 3339", () => {
    expect(issuePaths(ConsumptionCounter.safeParse(makeCounter({ window_start_utc: "1735725600" })))).toEqual(
      ["window_start_utc"],
    );
  });
});
