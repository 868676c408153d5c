import { nanosToUsd, type RateMultiplier, rateToPicosPer1k, tokenCostNanos, toSafeNumber } from "./money";
import { type EffectiveRates, ratesForPrompt } from "./rates";

/**
 * How an upstream reports cached tokens.
 * - "openai": cached prompt tokens are a SUBSET of input_tokens (OpenAI, Azure, Gemini, and
 *   every OpenAI-compatible API). Cost = (input − cached)·in + cached·cached_in + output·out.
 * - "anthropic": cache-read and cache-creation tokens are ADDITIVE to input_tokens.
 *   Cost = input·in + cache_read·read + creation_5m·creation + creation_1h·creation_1h + output·out.
 *
 * Cache writes: `cache_creation_per_1k` is the 5-minute write rate (1.25× input at Anthropic). Writes
 * to the 1-hour cache bill at 2× input, i.e. 1.6× the 5-minute rate; that ratio is applied to
 * whatever 5-minute rate a provider row or the catalog sets (CACHE_1H_PER_5M).
 *
 * The prompt that decides a long-context tier (promptTokens) is what the vendor counts against its
 * threshold: the input in the OpenAI shape (cached tokens are inside it; Gemini's prompt), and in
 * the Anthropic shape input + cache reads + cache writes (Anthropic's "input tokens incl. cache").
 */
export type CostShape = "openai" | "anthropic";

/**
 * Token counts in the spec's names. For the Anthropic shape `cached_input_tokens` carries the
 * cache-read tokens. `total_tokens` is not used for cost.
 */
export type TokenUsage = {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens?: number;
  cache_creation_tokens?: number;
  /** Of cache_creation_tokens, the writes to the 1-hour cache (Anthropic shape). */
  cache_creation_1h_tokens?: number;
  total_tokens?: number;
};

/** A 1-hour cache write costs 2× input where a 5-minute one costs 1.25×: 8/5 of the 5-minute rate. */
export const CACHE_1H_PER_5M: RateMultiplier = { numerator: 8n, denominator: 5n };

/** The spec's cost fields in USD, and the same amounts as exact integer nano-USD. */
export type CostBreakdown = {
  input_cost_usd: number;
  cached_input_cost_usd: number;
  cache_creation_cost_usd: number;
  output_cost_usd: number;
  /** cached_input_cost_usd + cache_creation_cost_usd */
  cache_cost_usd: number;
  cost_usd: number;
  input_cost_nanos: number;
  cached_input_cost_nanos: number;
  cache_creation_cost_nanos: number;
  output_cost_nanos: number;
  cache_cost_nanos: number;
  cost_nanos: number;
};

type Parts = { input: bigint; cachedInput: bigint; cacheCreation: bigint; output: bigint };

/**
 * The most tokens of one kind (input, cache read, cache write, output) a request is billed for:
 * above every model's context window (10 million at most today). An upstream reporting more is
 * broken, and reading its count as this keeps every cost exact: at the highest rate a body may set
 * ($100 per 1k tokens, MAX_RATE_PER_1K in packages/contracts), the four kinds, a 1-hour cache write
 * at 1.6×, cost at most 4.6 × 16,000,000 × $0.10 = $7.36 million, inside the ±2^53 nano-USD
 * (about $9 million) a number holds exactly.
 */
export const MAX_BILLABLE_TOKENS = 16_000_000;

/** Upstream counts are trusted to be small integers but never to be sane: NaN, negatives → 0. */
const tokens = (value: number | undefined): number =>
  value === undefined || !Number.isFinite(value) || value <= 0
    ? 0
    : Math.min(Math.floor(value), MAX_BILLABLE_TOKENS);

const breakdown = ({ input, cachedInput, cacheCreation, output }: Parts): CostBreakdown => {
  const cache = cachedInput + cacheCreation;
  const total = input + cache + output;
  return {
    input_cost_usd: nanosToUsd(input),
    cached_input_cost_usd: nanosToUsd(cachedInput),
    cache_creation_cost_usd: nanosToUsd(cacheCreation),
    output_cost_usd: nanosToUsd(output),
    cache_cost_usd: nanosToUsd(cache),
    cost_usd: nanosToUsd(total),
    input_cost_nanos: toSafeNumber(input),
    cached_input_cost_nanos: toSafeNumber(cachedInput),
    cache_creation_cost_nanos: toSafeNumber(cacheCreation),
    output_cost_nanos: toSafeNumber(output),
    cache_cost_nanos: toSafeNumber(cache),
    cost_nanos: toSafeNumber(total),
  };
};

/** The prompt a long-context threshold is compared with, in the request's cost shape. */
export const promptTokens = (usage: TokenUsage, shape: CostShape): number =>
  shape === "openai"
    ? tokens(usage.input_tokens)
    : tokens(usage.input_tokens) + tokens(usage.cached_input_tokens) + tokens(usage.cache_creation_tokens);

/**
 * Cost of one request. Above a long-context threshold (rates.long_context) every token of the
 * request is billed at the tier's rates, as the vendors bill it. Each component is rounded to the nano-USD once (half up); the total
 * and cache_cost are sums of the rounded components, so they always add up.
 *
 * OpenAI shape: cached_input_tokens larger than input_tokens is clamped to input_tokens, and
 * cache_creation_tokens are ignored (OpenAI-shape vendors do not charge for cache writes). Each
 * count is read as at most MAX_BILLABLE_TOKENS, so with rates up to $100 per 1k it never throws;
 * a higher rate can exceed the exact range (RangeError), which is why bodies cannot set one.
 */
export const computeCost = (
  usage: TokenUsage,
  effective: EffectiveRates,
  shape: CostShape,
): CostBreakdown => {
  const rates = ratesForPrompt(effective, promptTokens(usage, shape));
  const input = tokens(usage.input_tokens);
  const output = tokens(usage.output_tokens);
  const cached = tokens(usage.cached_input_tokens);
  const outputCost = tokenCostNanos(output, rateToPicosPer1k(rates.output_per_1k));
  const inputRate = rateToPicosPer1k(rates.input_per_1k);
  switch (shape) {
    case "openai": {
      const cachedSubset = Math.min(cached, input);
      return breakdown({
        input: tokenCostNanos(input - cachedSubset, inputRate),
        cachedInput: tokenCostNanos(cachedSubset, rateToPicosPer1k(rates.cached_input_per_1k)),
        cacheCreation: 0n,
        output: outputCost,
      });
    }
    case "anthropic": {
      const creation = tokens(usage.cache_creation_tokens);
      const oneHour = Math.min(tokens(usage.cache_creation_1h_tokens), creation);
      const fiveMinuteRate = rateToPicosPer1k(rates.cache_creation_per_1k);
      return breakdown({
        input: tokenCostNanos(input, inputRate),
        cachedInput: tokenCostNanos(cached, rateToPicosPer1k(rates.cache_read_per_1k)),
        cacheCreation:
          tokenCostNanos(creation - oneHour, fiveMinuteRate) +
          tokenCostNanos(oneHour, fiveMinuteRate, CACHE_1H_PER_5M),
        output: outputCost,
      });
    }
  }
};

/** A breakdown of zero cost: the identity for sumCosts, and the cost of a denied request. */
export const zeroCost = (): CostBreakdown =>
  breakdown({ input: 0n, cachedInput: 0n, cacheCreation: 0n, output: 0n });

/**
 * Sum of breakdowns over their nano-USD fields, exactly; the USD fields are derived from the
 * sums, never added as floats. Throws RangeError past about $9 million.
 */
export const sumCosts = (costs: Iterable<CostBreakdown>): CostBreakdown => {
  const sum: Parts = { input: 0n, cachedInput: 0n, cacheCreation: 0n, output: 0n };
  for (const cost of costs) {
    sum.input += BigInt(cost.input_cost_nanos);
    sum.cachedInput += BigInt(cost.cached_input_cost_nanos);
    sum.cacheCreation += BigInt(cost.cache_creation_cost_nanos);
    sum.output += BigInt(cost.output_cost_nanos);
  }
  return breakdown(sum);
};
