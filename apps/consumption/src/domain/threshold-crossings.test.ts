import type { CapStatus } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { thresholdCrossings, type WatchedCaps } from "./threshold-crossings";

const status = (overrides: Partial<CapStatus> = {}): CapStatus => ({
  source: "budget_rule",
  source_id: "rule-1",
  source_name: "team cap",
  measure: "tokens",
  dimension_kind: "user",
  dimension_id: "usr-1",
  window_seconds: 3600,
  window_start_utc: "2031-01-01T10:00:00.000Z",
  limit: 1_000,
  used: 0,
  held: 0,
  remaining: 1_000,
  ...overrides,
});

const ALL: WatchedCaps = { thresholds: [50, 80, 100], budget_rule_ids: [], policy_ids: [] };
const reached = (statuses: CapStatus[], watched = ALL) =>
  thresholdCrossings("acc-1", statuses, watched).map((crossing) => crossing.counter.threshold);

describe("thresholdCrossings", () => {
  it("lists every threshold settled usage has reached, the threshold itself included", () => {
    expect(reached([status({ used: 499 })])).toEqual([]);
    expect(reached([status({ used: 500 })])).toEqual([50]);
    expect(reached([status({ used: 850 })])).toEqual([50, 80]);
    expect(reached([status({ used: 1_000 })])).toEqual([50, 80, 100]);
    expect(reached([status({ used: 1_200 })])).toEqual([50, 80, 100]);
  });

  it("counts held headroom as nothing: only what was spent raises an alert", () => {
    expect(reached([status({ used: 100, held: 900, remaining: 0 })])).toEqual([]);
  });

  it("reaches a USD threshold exactly, although USD amounts are floats", () => {
    // 0.57 / 1 × 100 is 56.99999999999999 in floating point.
    expect(reached([status({ measure: "usd", limit: 1, used: 0.57 })], { ...ALL, thresholds: [57] })).toEqual(
      [57],
    );
  });

  it("watches only the caps of the rules and policies named, when any are", () => {
    const policyCap = status({ source: "llm_policy", source_id: "pol-1", used: 900 });
    const ruleCap = status({ source_id: "rule-2", used: 900 });
    const scoped = { ...ALL, budget_rule_ids: ["rule-2"] };
    expect(reached([policyCap, ruleCap], scoped)).toEqual([50, 80]);
    expect(thresholdCrossings("acc-1", [policyCap, ruleCap], scoped)[0]?.counter.source_id).toBe("rule-2");
    expect(reached([policyCap], { ...ALL, policy_ids: ["pol-1"] })).toEqual([50, 80]);
  });

  it("says which counter, cap and window crossed, in the cap's unit", () => {
    const [crossing] = thresholdCrossings(
      "acc-1",
      [status({ measure: "usd", limit: 5, used: 4.5, dimension_kind: "group", dimension_id: "grp-1" })],
      { ...ALL, thresholds: [80] },
    );
    expect(crossing?.counter).toEqual({
      scope: "group",
      subject_id: "grp-1",
      source: "budget_rule",
      source_id: "rule-1",
      source_name: "team cap",
      kind: "usd",
      cap: 5,
      used: 4.5,
      threshold: 80,
      window_seconds: 3600,
      window_start: "2031-01-01T10:00:00.000Z",
      window_end: "2031-01-01T11:00:00.000Z",
    });
  });

  it("knows each alert by its cap, counter, window and threshold, the same however often it is computed", () => {
    const keys = (statuses: CapStatus[]) => thresholdCrossings("acc-1", statuses, ALL).map((c) => c.key);
    const [at50, at80] = keys([status({ used: 800 })]);
    expect(keys([status({ used: 900 })])).toEqual([at50, at80]);
    expect(at50).not.toBe(at80);
    const nextWindow = keys([status({ used: 800, window_start_utc: "2031-01-01T11:00:00.000Z" })]);
    expect(nextWindow).toHaveLength(2);
    expect(nextWindow).not.toContain(at50);
    expect(keys([status({ used: 800, measure: "usd" })])).not.toContain(at50);
    expect(keys([status({ used: 800, dimension_id: "usr-2" })])).not.toContain(at50);
  });
});
