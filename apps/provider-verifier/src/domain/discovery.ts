import { type CatalogEntry, type CatalogEntryModel, findCatalogModel } from "@agentnet/catalog";
import type { DiscoveredModel } from "@agentnet/contracts";
import type { ListedModel } from "./parsers";

const ratesOf = (model: CatalogEntryModel) => ({
  input_per_1k: model.input_per_1k,
  output_per_1k: model.output_per_1k,
  cached_input_per_1k: model.cached_input_per_1k,
  cache_read_per_1k: model.cache_read_per_1k,
  cache_creation_per_1k: model.cache_creation_per_1k,
});

const ZERO_RATES = {
  input_per_1k: 0,
  output_per_1k: 0,
  cached_input_per_1k: 0,
  cache_read_per_1k: 0,
  cache_creation_per_1k: 0,
};

/**
 * Prices what a vendor listed from the shipped table (ids and aliases). A model the table lacks
 * is `pricing_known: false` with zero rates: the operator must set them (spec "Discovered model").
 * The vendor's own id is kept, so it is what the operator configures and callers send.
 */
export function toDiscoveredModels(catalogId: string, listed: readonly ListedModel[]): DiscoveredModel[] {
  const seen = new Set<string>();
  const out: DiscoveredModel[] = [];
  for (const model of listed) {
    if (seen.has(model.id)) continue;
    seen.add(model.id);
    const known = findCatalogModel(catalogId, model.priceAs ?? model.id);
    out.push({
      id: model.id,
      label: model.label ?? known?.label ?? model.id,
      pricing_known: known !== undefined,
      ...(known ? ratesOf(known) : ZERO_RATES),
    });
  }
  return out;
}

/** The catalog's own model list, for entries whose listing is never contacted. */
export const catalogModelsAsDiscovered = (entry: CatalogEntry): DiscoveredModel[] =>
  entry.models.map((model) => ({ id: model.id, label: model.label, pricing_known: true, ...ratesOf(model) }));
