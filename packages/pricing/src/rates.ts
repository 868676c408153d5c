/**
 * Effective per-1k rates for one request (spec "Provider model").
 *
 * - input_per_1k and output_per_1k come from the provider's model row when it has one,
 *   else from the catalog model.
 * - A cache rate the provider row omits inherits the catalog default for the model.
 * - A cache rate of 0 means "no discount": those tokens bill at input_per_1k. The same
 *   holds when neither the provider row nor the catalog has a value.
 * - Long-context tier (`long_context`): the rates a vendor bills the WHOLE request at once its
 *   prompt passes a threshold (Gemini 2.5 Pro and 3.x Pro over 200k prompt tokens, Claude Sonnet
 *   4/4.5 over 200k input, OpenAI's 1M-window GPT-5.x over 272k). A row naming a tier uses it. A
 *   row without one inherits the catalog's only when it quotes the catalog's own input and output
 *   rates (the list price, tier included); a row at other rates is another price list (negotiated,
 *   a reseller's) and has no tier unless it names one. Tier cache rates follow the rule above
 *   against the tier's input rate (0 or absent: billed at the tier's input rate).
 */

/** A long-context tier as a row or the catalog states it: rates above `above_input_tokens`. */
export type LongContextCard = {
  /** The tier applies when the prompt (see computeCost) is MORE than this many tokens. */
  above_input_tokens: number;
  input_per_1k: number;
  output_per_1k: number;
  cached_input_per_1k?: number;
  cache_read_per_1k?: number;
  cache_creation_per_1k?: number;
};

/** Per-1k USD rates as a provider model row or a catalog model carries them. */
export type RateCard = {
  input_per_1k: number;
  output_per_1k: number;
  cached_input_per_1k?: number;
  cache_read_per_1k?: number;
  cache_creation_per_1k?: number;
  long_context?: LongContextCard;
};

/** The rates of a tier, each resolved to what is billed. */
export type TierRates = {
  input_per_1k: number;
  output_per_1k: number;
  cached_input_per_1k: number;
  cache_read_per_1k: number;
  cache_creation_per_1k: number;
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
  /** The whole request's rates once its prompt is above `above_input_tokens`; absent: one tier. */
  long_context?: TierRates & { above_input_tokens: number };
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
  const tier = longContextOf(providerModel, catalogModel);
  return {
    input_per_1k: input,
    output_per_1k: base?.output_per_1k ?? 0,
    cached_input_per_1k: cacheRate("cached_input_per_1k"),
    cache_read_per_1k: cacheRate("cache_read_per_1k"),
    cache_creation_per_1k: cacheRate("cache_creation_per_1k"),
    pricing_known: base !== undefined,
    ...(tier ? { long_context: resolveTier(tier) } : {}),
  };
};

/** The tier that goes with the base rates in use (see the rules above). */
const longContextOf = (
  providerModel: RateCard | undefined,
  catalogModel: RateCard | undefined,
): LongContextCard | undefined => {
  if (!providerModel) return catalogModel?.long_context;
  if (providerModel.long_context) return providerModel.long_context;
  const listPrice =
    catalogModel !== undefined &&
    providerModel.input_per_1k === catalogModel.input_per_1k &&
    providerModel.output_per_1k === catalogModel.output_per_1k;
  return listPrice ? catalogModel.long_context : undefined;
};

const resolveTier = (tier: LongContextCard): TierRates & { above_input_tokens: number } => {
  const cacheRate = (rate: number | undefined) =>
    rate === undefined || rate === 0 ? tier.input_per_1k : rate;
  return {
    above_input_tokens: tier.above_input_tokens,
    input_per_1k: tier.input_per_1k,
    output_per_1k: tier.output_per_1k,
    cached_input_per_1k: cacheRate(tier.cached_input_per_1k),
    cache_read_per_1k: cacheRate(tier.cache_read_per_1k),
    cache_creation_per_1k: cacheRate(tier.cache_creation_per_1k),
  };
};

/**
 * The rates a request is billed at, given its prompt size: the long-context tier's when the prompt
 * is above the tier's threshold, else the base rates. Vendors reprice the whole request, so every
 * token kind (output and cache too) takes the tier's rate. The proxy's hold uses this with its
 * prompt estimate, computeCost with the prompt the vendor reported.
 */
export const ratesForPrompt = (rates: EffectiveRates, promptTokens: number): TierRates => {
  const tier = rates.long_context;
  return tier && promptTokens > tier.above_input_tokens ? tier : rates;
};
