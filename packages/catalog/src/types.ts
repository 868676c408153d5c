import type { CatalogModel, CatalogProvider } from "@agentnet/contracts";

export type {
  ApiFlavor,
  CatalogExtraHeader,
  CatalogListing,
  CatalogModel,
  CatalogProvider,
  IdentityHeaderPair,
  IdentityInjection,
  IdentityJsonMetadata,
  ListingShape,
  LongContextRates,
} from "@agentnet/contracts";

/** Token categories a vendor bills separately; names which of the model's rates apply. */
export type PricingSurface = "input" | "output" | "cached_input" | "cache_read" | "cache_creation";

/** A catalog model plus other ids the vendor uses for it (dated snapshots, aliases). */
export type CatalogEntryModel = CatalogModel & { aliases?: string[] };

/** A full catalog entry: the public fields, with the auth header always named, and model aliases. */
export type CatalogEntry = Omit<
  CatalogProvider,
  "models" | "auth_header_name" | "pricing_surfaces" | "prices_checked_on" | "prices_source"
> & {
  /** e.g. "Authorization", "x-api-key", "api-key". */
  auth_header_name: string;
  pricing_surfaces: PricingSurface[];
  models: CatalogEntryModel[];
  /**
   * The day the model prices were last checked against the vendor's own price page (YYYY-MM-DD).
   * A model missing from the table is unpriced (docs/ARCHITECTURE.md "Caps and consumption").
   */
  prices_checked_on: string;
  /** The vendor's price page the prices were checked against (https URL); null: none shipped. */
  prices_source: string | null;
};
