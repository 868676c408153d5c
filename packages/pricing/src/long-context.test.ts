import { describe, expect, it } from "vitest";
import { computeCost, promptTokens, type TokenUsage } from "./cost";
import { type EffectiveRates, type RateCard, ratesForPrompt, resolveRates } from "./rates";

// Claude Sonnet 4.5, USD per million: $3 / $0.30 read / $3.75 5-min write / $15; above 200k input
// (cache included) $6 / $0.60 / $7.50 / $22.50.
const sonnetList: RateCard = {
  input_per_1k: 0.003,
  output_per_1k: 0.015,
  cache_read_per_1k: 0.0003,
  cache_creation_per_1k: 0.00375,
  long_context: {
    above_input_tokens: 200_000,
    input_per_1k: 0.006,
    output_per_1k: 0.0225,
    cache_read_per_1k: 0.0006,
    cache_creation_per_1k: 0.0075,
  },
};

// Gemini 2.5 Pro: $1.25 / $0.125 cached / $10; above 200k prompt tokens $2.50 / $0.25 / $15.
const geminiProList: RateCard = {
  input_per_1k: 0.00125,
  output_per_1k: 0.01,
  cached_input_per_1k: 0.000125,
  long_context: {
    above_input_tokens: 200_000,
    input_per_1k: 0.0025,
    output_per_1k: 0.015,
    cached_input_per_1k: 0.00025,
  },
};

const sonnet = resolveRates(undefined, sonnetList);
const geminiPro = resolveRates(undefined, geminiProList);

describe("long-context tier: the whole request at the tier's rates once the prompt passes the threshold", () => {
  it("OpenAI shape: a prompt of exactly the threshold is billed at the base rates", () => {
    const cost = computeCost({ input_tokens: 200_000, output_tokens: 1_000 }, geminiPro, "openai");
    // 200,000 × $1.25/M + 1,000 × $10/M = $0.25 + $0.01
    expect(cost.cost_nanos).toBe(260_000_000);
  });

  it("OpenAI shape: one token more bills every token, cached and output too, at the tier", () => {
    const cost = computeCost(
      { input_tokens: 200_001, cached_input_tokens: 100_000, output_tokens: 1_000 },
      geminiPro,
      "openai",
    );
    // 100,001 × $2.50/M + 100,000 × $0.25/M + 1,000 × $15/M
    expect(cost.input_cost_nanos).toBe(250_002_500);
    expect(cost.cached_input_cost_nanos).toBe(25_000_000);
    expect(cost.output_cost_nanos).toBe(15_000_000);
    expect(cost.cost_nanos).toBe(290_002_500);
  });

  it("Anthropic shape: cache reads and writes count toward the threshold", () => {
    const usage: TokenUsage = {
      input_tokens: 1_000,
      cached_input_tokens: 150_000,
      cache_creation_tokens: 50_000,
      cache_creation_1h_tokens: 10_000,
      output_tokens: 2_000,
    };
    expect(promptTokens(usage, "anthropic")).toBe(201_000);
    const cost = computeCost(usage, sonnet, "anthropic");
    // 1,000 × $6/M; 150,000 × $0.60/M; 40,000 × $7.50/M + 10,000 × $12/M (1.6 × $7.50); 2,000 × $22.50/M
    expect(cost.input_cost_nanos).toBe(6_000_000);
    expect(cost.cached_input_cost_nanos).toBe(90_000_000);
    expect(cost.cache_creation_cost_nanos).toBe(300_000_000 + 120_000_000);
    expect(cost.output_cost_nanos).toBe(45_000_000);
  });

  it("Anthropic shape: the same usage under the threshold stays at the base rates", () => {
    const usage = { input_tokens: 1_000, cached_input_tokens: 199_000, output_tokens: 2_000 };
    expect(promptTokens(usage, "anthropic")).toBe(200_000);
    const cost = computeCost(usage, sonnet, "anthropic");
    // 1,000 × $3/M + 199,000 × $0.30/M + 2,000 × $15/M
    expect(cost.cost_nanos).toBe(3_000_000 + 59_700_000 + 30_000_000);
  });

  it("a model without a tier is billed at its base rates at any size", () => {
    const flat = resolveRates(undefined, { input_per_1k: 0.001, output_per_1k: 0.002 });
    expect(computeCost({ input_tokens: 900_000, output_tokens: 0 }, flat, "openai").cost_nanos).toBe(
      900_000_000,
    );
  });

  it("a tier cache rate left out (or 0) bills at the tier's input rate", () => {
    const rates = resolveRates(undefined, {
      input_per_1k: 0.001,
      output_per_1k: 0.002,
      cached_input_per_1k: 0.0001,
      long_context: { above_input_tokens: 10, input_per_1k: 0.004, output_per_1k: 0.008 },
    });
    expect(rates.long_context?.cached_input_per_1k).toBe(0.004);
    expect(
      computeCost({ input_tokens: 1_000, cached_input_tokens: 1_000, output_tokens: 0 }, rates, "openai"),
    ).toMatchObject({ cached_input_cost_nanos: 4_000_000 });
  });
});

describe("which tier goes with a provider's model row", () => {
  it("a row quoting the list's own input and output rates inherits the list's tier", () => {
    const row = { input_per_1k: 0.003, output_per_1k: 0.015 };
    expect(resolveRates(row, sonnetList).long_context?.input_per_1k).toBe(0.006);
  });

  it("a row at other rates (a negotiated price) has no tier unless it names one", () => {
    const discounted = { input_per_1k: 0.0027, output_per_1k: 0.0135 };
    expect(resolveRates(discounted, sonnetList).long_context).toBeUndefined();
    const named = {
      ...discounted,
      long_context: { above_input_tokens: 200_000, input_per_1k: 0.0054, output_per_1k: 0.02025 },
    };
    expect(resolveRates(named, sonnetList).long_context).toMatchObject({
      above_input_tokens: 200_000,
      input_per_1k: 0.0054,
      cache_read_per_1k: 0.0054,
    });
  });

  it("a model nobody priced has no tier", () => {
    expect(resolveRates(undefined, undefined).long_context).toBeUndefined();
  });
});

/** A small deterministic generator (mulberry32), so a failing case can be replayed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const usageFrom = (next: () => number): TokenUsage => {
  const creation = Math.floor(next() * 150_000);
  return {
    input_tokens: Math.floor(next() * 400_000),
    cached_input_tokens: Math.floor(next() * 150_000),
    cache_creation_tokens: creation,
    cache_creation_1h_tokens: Math.floor(next() * creation),
    output_tokens: Math.floor(next() * 100_000),
  };
};

describe("long-context properties (2,000 seeded cases per shape)", () => {
  const cases = (seed: number) => {
    const next = random(seed);
    return Array.from({ length: 2_000 }, () => usageFrom(next));
  };

  it.each([
    ["openai", geminiPro],
    ["anthropic", sonnet],
  ] as const)(
    "%s: the cost is the base cost at or under the threshold and the tier's cost above it",
    (shape, rates) => {
      const tierOnly: EffectiveRates = { ...rates, ...rates.long_context, long_context: undefined };
      const baseOnly: EffectiveRates = { ...rates, long_context: undefined };
      for (const usage of cases(shape === "openai" ? 7 : 11)) {
        const above = promptTokens(usage, shape) > 200_000;
        const expected = computeCost(usage, above ? tierOnly : baseOnly, shape);
        expect(computeCost(usage, rates, shape), JSON.stringify(usage)).toEqual(expected);
      }
    },
  );

  it.each([
    ["openai", geminiPro],
    ["anthropic", sonnet],
  ] as const)("%s: a tier never makes a request cheaper, and its parts still add up", (shape, rates) => {
    const baseOnly: EffectiveRates = { ...rates, long_context: undefined };
    for (const usage of cases(shape === "openai" ? 13 : 17)) {
      const cost = computeCost(usage, rates, shape);
      expect(cost.cost_nanos).toBeGreaterThanOrEqual(computeCost(usage, baseOnly, shape).cost_nanos);
      expect(cost.cost_nanos).toBe(
        cost.input_cost_nanos +
          cost.cached_input_cost_nanos +
          cost.cache_creation_cost_nanos +
          cost.output_cost_nanos,
      );
    }
  });

  it("ratesForPrompt picks the tier strictly above the threshold", () => {
    expect(ratesForPrompt(sonnet, 200_000).input_per_1k).toBe(0.003);
    expect(ratesForPrompt(sonnet, 200_001).input_per_1k).toBe(0.006);
  });
});
