import type { CatalogEntry, CatalogEntryModel, CatalogProvider } from "./types";
import { anthropic } from "./vendors/anthropic";
import { azure } from "./vendors/azure";
import { bedrock } from "./vendors/bedrock";
import { cloudflare } from "./vendors/cloudflare";
import { custom } from "./vendors/custom";
import { gemini } from "./vendors/gemini";
import { mistral } from "./vendors/mistral";
import { openai } from "./vendors/openai";
import { vertex } from "./vendors/vertex";

/** Freezes the data every service shares, so no caller can edit a price in place. */
const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
};

/** The static provider catalog (spec "Catalog provider"), in display order. */
export const CATALOG: readonly CatalogEntry[] = deepFreeze([
  openai,
  anthropic,
  azure,
  cloudflare,
  vertex,
  bedrock,
  gemini,
  mistral,
  custom,
]);

const byId = new Map(CATALOG.map((entry) => [entry.id, entry]));

/** An entry's models by id, then by alias where no model has that id (the first listed wins each). */
function modelsByName(models: readonly CatalogEntryModel[]): Map<string, CatalogEntryModel> {
  const index = new Map<string, CatalogEntryModel>();
  for (const model of models) if (!index.has(model.id)) index.set(model.id, model);
  for (const model of models) {
    for (const alias of model.aliases ?? []) if (!index.has(alias)) index.set(alias, model);
  }
  return index;
}

/** Looked up several times for every proxied request: a scan of every model's aliases showed in its profile. */
const modelIndexes = new Map(CATALOG.map((entry) => [entry.id, modelsByName(entry.models)]));

export const findCatalogProvider = (id: string): CatalogEntry | undefined => byId.get(id);

/**
 * The catalog model a vendor model id refers to: its own id, or one of its aliases (the dated
 * snapshot ids vendors list). An unknown id is undefined: pricing_known false for discovery.
 */
export const findCatalogModel = (catalogId: string, modelId: string): CatalogEntryModel | undefined =>
  modelIndexes.get(catalogId)?.get(modelId);

/**
 * What GET /api/agent-network/catalog/providers returns for an entry: a deep copy with every
 * field of contracts' CatalogProvider, including api_flavor, listing and auth_header_name
 * (none is secret: they say how any client talks to the vendor), the price check date and the
 * price page (the dashboard flags stale prices). Model aliases stay internal.
 */
export const catalogPublicView = (entry: CatalogEntry): CatalogProvider => {
  const { models, prices_source, ...provider } = structuredClone(entry);
  return {
    ...provider,
    ...(prices_source === null ? {} : { prices_source }),
    models: models.map(({ aliases: _aliases, ...m }) => m),
  };
};
