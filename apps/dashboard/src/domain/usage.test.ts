import type { UsageSeriesBucket } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { shareOf, spendRows, succeeded, sumSeries } from "./usage";

const bucket = (overrides: Partial<UsageSeriesBucket> = {}): UsageSeriesBucket => ({
  period_start: "2026-03-12T09:00:00Z",
  requests: 10,
  errors: 1,
  denied: 2,
  latency_p50_ms: 400,
  latency_p95_ms: 900,
  input_tokens: 100,
  output_tokens: 20,
  total_tokens: 120,
  cost_usd: 0.1,
  ...overrides,
});

describe("sumSeries", () => {
  it("adds up requests, outcomes, tokens and cost without float drift", () => {
    expect(sumSeries([bucket(), bucket({ cost_usd: 0.2, requests: 5, errors: 0, denied: 0 })])).toEqual({
      requests: 15,
      errors: 1,
      denied: 2,
      total_tokens: 240,
      input_tokens: 200,
      output_tokens: 40,
      cost_usd: 0.3,
    });
  });
});

describe("rates", () => {
  it("is a share of the requests, or none without requests", () => {
    expect(shareOf(1, 4)).toBe(0.25);
    expect(shareOf(0, 0)).toBeNull();
  });

  it("counts as succeeded what was neither denied nor an error", () => {
    expect(succeeded(bucket())).toBe(7);
  });
});

describe("spendRows", () => {
  const row = (key: string, cost: number) => ({ key, requests: 2, total_tokens: 30, cost_usd: cost });

  it("names the keys it knows, keeps the API's order and shows unknown ids as they are", () => {
    const names = new Map([["p1", "OpenAI"]]);
    expect(spendRows("provider", [row("p1", 0.5), row("p-gone", 0.1)], names)).toEqual([
      { key: "p1", label: "OpenAI", requests: 2, tokens: 30, cost: 0.5 },
      { key: "p-gone", label: "p-gone", requests: 2, tokens: 30, cost: 0.1 },
    ]);
  });

  it("says in words what a row without a key stands for", () => {
    expect(spendRows("provider", [row("", 0)], new Map())[0]?.label).toBe(
      "No provider (denied before routing)",
    );
    expect(spendRows("model", [row("", 0)], new Map())[0]?.label).toBe("No model");
  });
});
