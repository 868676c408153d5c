import { API_KEY_TOKEN } from "@agentnet/contracts";
import type { CatalogEntryModel } from "../types";

export { API_KEY_TOKEN };

/** Vendor pages quote USD per million tokens; missing rates are 0 ("not billed separately"). */
export type Rates = {
  input: number;
  output: number;
  cached_input?: number;
  cache_read?: number;
  cache_creation?: number;
};

/**
 * List prices, and the long-context tier where the vendor bills one: the whole request at
 * `long_context`'s rates once its prompt is above `above_input_tokens` (packages/pricing).
 */
export type PerMillion = Rates & { long_context?: Rates & { above_input_tokens: number } };

/** USD per million → USD per 1000, cleaned of float noise (0.075 / 1000 is 0.000075, not …01). */
export const per1k = (usdPerMillion: number): number => Number((usdPerMillion / 1000).toPrecision(12));

/** A catalog model from per-million list prices, the way vendor pricing pages show them. */
export const model = (
  id: string,
  label: string,
  context_window: number,
  price: PerMillion,
  aliases: string[] = [],
): CatalogEntryModel => ({
  id,
  label,
  input_per_1k: per1k(price.input),
  output_per_1k: per1k(price.output),
  cached_input_per_1k: per1k(price.cached_input ?? 0),
  cache_read_per_1k: per1k(price.cache_read ?? 0),
  cache_creation_per_1k: per1k(price.cache_creation ?? 0),
  context_window,
  ...(price.long_context ? { long_context: longContext(price.long_context) } : {}),
  ...(aliases.length > 0 ? { aliases } : {}),
});

const longContext = ({ above_input_tokens, ...tier }: Rates & { above_input_tokens: number }) => ({
  above_input_tokens,
  input_per_1k: per1k(tier.input),
  output_per_1k: per1k(tier.output),
  cached_input_per_1k: per1k(tier.cached_input ?? 0),
  cache_read_per_1k: per1k(tier.cache_read ?? 0),
  cache_creation_per_1k: per1k(tier.cache_creation ?? 0),
});

/** `Authorization: Bearer <key>`, the template of OpenAI-style APIs. */
export const BEARER_TEMPLATE = `Bearer ${API_KEY_TOKEN}`;
