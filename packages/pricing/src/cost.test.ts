import { describe, expect, it } from "vitest";
import { type CostBreakdown, computeCost, MAX_BILLABLE_TOKENS, sumCosts, zeroCost } from "./cost";
import { type EffectiveRates, resolveRates } from "./rates";

// gpt-4o list prices: $2.50 / $1.25 cached / $10 per million tokens.
const gpt4o: EffectiveRates = resolveRates(undefined, {
  input_per_1k: 0.0025,
  output_per_1k: 0.01,
  cached_input_per_1k: 0.00125,
});

// claude-sonnet-4-5 list prices: $3 / $0.30 read / $3.75 write / $15 per million tokens.
const sonnet: EffectiveRates = resolveRates(undefined, {
  input_per_1k: 0.003,
  output_per_1k: 0.015,
  cache_read_per_1k: 0.0003,
  cache_creation_per_1k: 0.00375,
});

describe("computeCost, OpenAI shape (cached is a subset of input)", () => {
  it("bills uncached input, cached input and output at their rates", () => {
    const cost = computeCost(
      { input_tokens: 10_000, cached_input_tokens: 4_000, output_tokens: 2_000 },
      gpt4o,
      "openai",
    );
    expect(cost).toEqual({
      input_cost_usd: 0.015, // 6000 × 0.0025 / 1000
      cached_input_cost_usd: 0.005, // 4000 × 0.00125 / 1000
      cache_creation_cost_usd: 0,
      output_cost_usd: 0.02,
      cache_cost_usd: 0.005,
      cost_usd: 0.04,
      input_cost_nanos: 15_000_000,
      cached_input_cost_nanos: 5_000_000,
      cache_creation_cost_nanos: 0,
      output_cost_nanos: 20_000_000,
      cache_cost_nanos: 5_000_000,
      cost_nanos: 40_000_000,
    });
  });

  it("clamps cached tokens that exceed input to the input count", () => {
    const cost = computeCost(
      { input_tokens: 1_000, cached_input_tokens: 5_000, output_tokens: 0 },
      gpt4o,
      "openai",
    );
    expect(cost.input_cost_nanos).toBe(0);
    expect(cost.cached_input_cost_usd).toBe(0.00125);
    expect(cost.cost_usd).toBe(0.00125);
  });

  it("ignores cache-creation tokens, which OpenAI-shape vendors do not charge", () => {
    const cost = computeCost(
      { input_tokens: 1_000, output_tokens: 0, cache_creation_tokens: 9_999 },
      gpt4o,
      "openai",
    );
    expect(cost.cache_creation_cost_nanos).toBe(0);
    expect(cost.cost_usd).toBe(0.0025);
  });

  it("bills cached tokens at the input rate when the cached rate is 0", () => {
    const rates = resolveRates(
      { input_per_1k: 0.002, output_per_1k: 0.008, cached_input_per_1k: 0 },
      undefined,
    );
    const cost = computeCost(
      { input_tokens: 1_000, cached_input_tokens: 1_000, output_tokens: 0 },
      rates,
      "openai",
    );
    expect(cost.cached_input_cost_usd).toBe(0.002);
    expect(cost.cost_usd).toBe(
      computeCost({ input_tokens: 1_000, output_tokens: 0 }, rates, "openai").cost_usd,
    );
  });
});

describe("computeCost, Anthropic shape (cache read and creation are additive)", () => {
  it("bills input, cache read, cache creation and output each at their rates", () => {
    const cost = computeCost(
      {
        input_tokens: 2_000,
        cached_input_tokens: 50_000,
        cache_creation_tokens: 10_000,
        output_tokens: 1_000,
      },
      sonnet,
      "anthropic",
    );
    expect(cost).toEqual({
      input_cost_usd: 0.006,
      cached_input_cost_usd: 0.015, // 50000 × 0.0003 / 1000
      cache_creation_cost_usd: 0.0375, // 10000 × 0.00375 / 1000
      output_cost_usd: 0.015,
      cache_cost_usd: 0.0525,
      cost_usd: 0.0735,
      input_cost_nanos: 6_000_000,
      cached_input_cost_nanos: 15_000_000,
      cache_creation_cost_nanos: 37_500_000,
      output_cost_nanos: 15_000_000,
      cache_cost_nanos: 52_500_000,
      cost_nanos: 73_500_000,
    });
  });

  it("does not clamp cache reads to input: they are additive", () => {
    const cost = computeCost(
      { input_tokens: 10, cached_input_tokens: 100_000, output_tokens: 0 },
      sonnet,
      "anthropic",
    );
    expect(cost.input_cost_nanos).toBe(30_000);
    expect(cost.cached_input_cost_usd).toBe(0.03);
  });

  it("bills cache tokens at the input rate when their rates are 0", () => {
    const rates = resolveRates(
      { input_per_1k: 0.003, output_per_1k: 0.015, cache_read_per_1k: 0, cache_creation_per_1k: 0 },
      undefined,
    );
    const cost = computeCost(
      { input_tokens: 1_000, cached_input_tokens: 1_000, cache_creation_tokens: 1_000, output_tokens: 0 },
      rates,
      "anthropic",
    );
    expect(cost.cost_usd).toBe(0.009);
  });

  it("gives different totals for the same counts in the two shapes", () => {
    const usage = { input_tokens: 1_000, cached_input_tokens: 1_000, output_tokens: 0 };
    expect(computeCost(usage, sonnet, "openai").cost_nanos).toBe(3_000_000); // cached ⊂ input, at input rate
    expect(computeCost(usage, sonnet, "anthropic").cost_nanos).toBe(3_300_000); // 1000 input + 1000 read
  });
});

describe("computeCost edge cases", () => {
  it("costs nothing for zero tokens", () => {
    expect(computeCost({ input_tokens: 0, output_tokens: 0 }, gpt4o, "openai")).toEqual(zeroCost());
    expect(computeCost({ input_tokens: 0, output_tokens: 0 }, sonnet, "anthropic")).toEqual(zeroCost());
  });

  it("treats negative, fractional and non-finite counts as sane integers", () => {
    const cost = computeCost(
      {
        input_tokens: -5,
        output_tokens: 1_000.9,
        cached_input_tokens: Number.NaN,
        cache_creation_tokens: Infinity,
      },
      sonnet,
      "anthropic",
    );
    expect(cost.cost_usd).toBe(0.015);
  });

  it("costs nothing for a model nobody priced", () => {
    const cost = computeCost(
      { input_tokens: 1_000, output_tokens: 1_000 },
      resolveRates(undefined, undefined),
      "openai",
    );
    expect(cost.cost_nanos).toBe(0);
  });

  it("rounds each component once, so the total always equals the sum of its parts", () => {
    // 1 token at $0.15 per million = 150 nanos; 1 cached token at $0.075 per million = 75 nanos.
    const rates = resolveRates(undefined, {
      input_per_1k: 0.00015,
      output_per_1k: 0.0006,
      cached_input_per_1k: 0.000075,
    });
    const cost = computeCost({ input_tokens: 2, cached_input_tokens: 1, output_tokens: 1 }, rates, "openai");
    expect([cost.input_cost_nanos, cost.cached_input_cost_nanos, cost.output_cost_nanos]).toEqual([
      150, 75, 600,
    ]);
    expect(cost.cost_nanos).toBe(825);
    // Half a nano rounds up: 1 token at $0.0005 per million is 0.5 nano.
    const tiny = resolveRates(undefined, { input_per_1k: 0.0000005, output_per_1k: 0 });
    expect(computeCost({ input_tokens: 1, output_tokens: 0 }, tiny, "openai").cost_nanos).toBe(1);
  });

  it("bills at most MAX_BILLABLE_TOKENS of each kind, whatever an upstream reports", () => {
    const cost = computeCost({ input_tokens: 1e12, output_tokens: 1e300 }, gpt4o, "openai");
    expect(cost).toEqual(
      computeCost({ input_tokens: MAX_BILLABLE_TOKENS, output_tokens: MAX_BILLABLE_TOKENS }, gpt4o, "openai"),
    );
  });

  // $100 per 1k tokens is the highest rate a body may set (MAX_RATE_PER_1K in packages/contracts).
  it("stays exact at $100 per 1k with every kind of token at its most, in both shapes", () => {
    const highest = resolveRates(
      {
        input_per_1k: 100,
        output_per_1k: 100,
        cached_input_per_1k: 100,
        cache_read_per_1k: 100,
        cache_creation_per_1k: 100,
      },
      undefined,
    );
    const most = {
      input_tokens: MAX_BILLABLE_TOKENS,
      output_tokens: MAX_BILLABLE_TOKENS,
      cached_input_tokens: MAX_BILLABLE_TOKENS,
      cache_creation_tokens: MAX_BILLABLE_TOKENS,
      cache_creation_1h_tokens: MAX_BILLABLE_TOKENS,
    };
    // 16M input + 16M reads + 16M 1-hour writes at 1.6× + 16M output, at $0.10 a token.
    expect(computeCost(most, highest, "anthropic").cost_usd).toBe(7_360_000);
    expect(computeCost(most, highest, "openai").cost_usd).toBe(3_200_000);
  });

  it("prices a million-token request exactly", () => {
    const opus = resolveRates(undefined, { input_per_1k: 0.015, output_per_1k: 0.075 });
    const cost = computeCost({ input_tokens: 1_000_000, output_tokens: 1_000_000 }, opus, "anthropic");
    expect(cost.cost_usd).toBe(90);
    expect(cost.cost_nanos).toBe(90_000_000_000);
  });
});

describe("sumCosts", () => {
  it("sums a million tiny costs to exactly the product", () => {
    // gpt-4o-mini: 7 input tokens at $0.15 per million = 1050 nano-USD per request.
    const mini = resolveRates(undefined, { input_per_1k: 0.00015, output_per_1k: 0.0006 });
    const one = computeCost({ input_tokens: 7, output_tokens: 0 }, mini, "openai");
    expect(one.cost_nanos).toBe(1_050);
    const costs: CostBreakdown[] = Array.from({ length: 1_000_000 }, () => one);
    const total = sumCosts(costs);
    expect(total.cost_nanos).toBe(1_050_000_000);
    expect(total.cost_usd).toBe(1.05);
    expect(total.input_cost_usd).toBe(1.05);
    // Adding the USD floats instead drifts.
    expect(costs.reduce((sum, cost) => sum + cost.cost_usd, 0)).not.toBe(1.05);
  });

  it("sums every component and keeps cache_cost = cached_input + cache_creation", () => {
    const a = computeCost(
      { input_tokens: 1_000, cached_input_tokens: 2_000, cache_creation_tokens: 3_000, output_tokens: 4_000 },
      sonnet,
      "anthropic",
    );
    const b = computeCost(
      { input_tokens: 10_000, cached_input_tokens: 4_000, output_tokens: 2_000 },
      gpt4o,
      "openai",
    );
    const total = sumCosts([a, b]);
    expect(total.input_cost_nanos).toBe(a.input_cost_nanos + b.input_cost_nanos);
    expect(total.cache_cost_nanos).toBe(total.cached_input_cost_nanos + total.cache_creation_cost_nanos);
    expect(total.cost_nanos).toBe(a.cost_nanos + b.cost_nanos);
    expect(total.cost_usd).toBe(0.11485); // 0.07485 + 0.04
  });

  it("returns zero for no costs and accepts any iterable", () => {
    expect(sumCosts([])).toEqual(zeroCost());
    function* two() {
      yield computeCost({ input_tokens: 1_000, output_tokens: 0 }, gpt4o, "openai");
      yield computeCost({ input_tokens: 1_000, output_tokens: 0 }, gpt4o, "openai");
    }
    expect(sumCosts(two()).cost_usd).toBe(0.005);
  });
});

describe("1-hour cache writes", () => {
  const rates = resolveRates(
    { input_per_1k: 0.005, output_per_1k: 0.025, cache_creation_per_1k: 0.00625 },
    undefined,
  );
  it("bill at 1.6x the 5-minute write rate (2x input), the rest of the writes at the 5-minute rate", () => {
    const cost = computeCost(
      { input_tokens: 0, output_tokens: 0, cache_creation_tokens: 3_000, cache_creation_1h_tokens: 2_000 },
      rates,
      "anthropic",
    );
    // 1,000 x $6.25/M + 2,000 x $10/M
    expect(cost.cache_creation_cost_nanos).toBe(6_250_000 + 20_000_000);
  });
  it("never count more 1-hour writes than writes", () => {
    const cost = computeCost(
      { input_tokens: 0, output_tokens: 0, cache_creation_tokens: 100, cache_creation_1h_tokens: 5_000 },
      rates,
      "anthropic",
    );
    expect(cost.cache_creation_cost_nanos).toBe(1_000_000);
  });
});
