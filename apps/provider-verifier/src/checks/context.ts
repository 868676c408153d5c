import type { CatalogEntry } from "@agentnet/catalog";
import { findCatalogProvider } from "@agentnet/catalog";
import { AppError } from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { VendorCredentialsOptions } from "@agentnet/vendor-auth";
import type { DialSettings } from "../dial/https";
import type { ResolveFn } from "../dial/resolve";

/** What a check needs besides the request: how to resolve, what may be dialed, and the limits. */
export interface CheckContext {
  resolve: ResolveFn;
  /** Exact hostnames allowed to resolve to non-public addresses (tests only; empty in production). */
  allowPrivateHosts: ReadonlySet<string>;
  dial: DialSettings;
  /** Anthropic-style pagination stops here, so a misbehaving vendor cannot keep a check busy. */
  maxPages: number;
  /** How keys are exchanged for tokens: which token endpoints besides the vendors' (tests), the CA. */
  vendorCredentials: VendorCredentialsOptions;
  logger: Logger;
}

export function requireCatalogEntry(id: string): CatalogEntry {
  const entry = findCatalogProvider(id);
  if (entry === undefined) {
    throw new AppError(422, "catalog.unknown_provider", `${id} is not a catalog provider`);
  }
  return entry;
}
