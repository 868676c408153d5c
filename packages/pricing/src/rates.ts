/**
 * Effective per-1k rates for one request (spec "Provider model").
 *
 * - input_per_1k and output_per_1k come from the provider's model row when it has one,
 *   else from the catalog model.
 * - A cache rate the provider row omits inherits the catalog default for the model.
 * - A cache rate of 0 means "no discount": those tokens bill at input_per_1k. The same
 *   holds when neither the provider row nor the catalog has a value.
 */

/** Per-1k USD rates as a provider model row or a catalog model carries them. */
export type RateCard = {
  input_per_1k: number;
  output_per_1k: number;
  cached_input_per_1k?: number;
  cache_read_per_1k?: number;
  cache_creation_per_1k?: number;
};

/** Every rate resolved to the USD per 1000 tokens actually billed. */
export type EffectiveRates = {
  input_per_1k: number;
  output_per_1k: number;
  /** OpenAI shape: cached prompt tokens, a subset of input. */
  cached_input_per_1k: number;
  /** Anthropic shape: cache-read tokens, additive to input. */
  cache_read_per_1k: number;
  /** Anthropic shape: cache-creation tokens, additive to input. */
  cache_creation_per_1k: number;
  /** false when neither a provider row nor a catalog model priced the model: every rate is 0. */
  pricing_known: boolean;
};

type CacheRate = "cached_input_per_1k" | "cache_read_per_1k" | "cache_creation_per_1k";

export const resolveRates = (
  providerModel: RateCard | undefined,
  catalogModel: RateCard | undefined,
): EffectiveRates => {
  const base = providerModel ?? catalogModel;
  const input = base?.input_per_1k ?? 0;
  const cacheRate = (key: CacheRate): number => {
    const chosen = providerModel?.[key] ?? catalogModel?.[key] ?? 0;
    return chosen === 0 ? input : chosen;
  };
  return {
    input_per_1k: input,
    output_per_1k: base?.output_per_1k ?? 0,
    cached_input_per_1k: cacheRate("cached_input_per_1k"),
    cache_read_per_1k: cacheRate("cache_read_per_1k"),
    cache_creation_per_1k: cacheRate("cache_creation_per_1k"),
    pricing_known: base !== undefined,
  };
};
