export { CATALOG, catalogPublicView, findCatalogModel, findCatalogProvider } from "./catalog";
export type {
  ApiFlavor,
  CatalogEntry,
  CatalogEntryModel,
  CatalogExtraHeader,
  CatalogListing,
  CatalogModel,
  CatalogProvider,
  IdentityHeaderPair,
  IdentityInjection,
  IdentityJsonMetadata,
  ListingShape,
  PricingSurface,
} from "./types";
