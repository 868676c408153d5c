import { z } from "zod";
import { CatalogProviderId, DiscoveredModel } from "./catalog";
import { endpoint } from "./subjects";

/**
 * Why a provider was stored without a vendor check. Each is a case the spec lists as "stored
 * unverified"; none is an error.
 */
export const UnverifiedReason = z.enum([
  /** The catalog entry declares no listing endpoint (e.g. `custom`). */
  "no_listing_endpoint",
  /** upstream_url has no host to derive a listing from. */
  "no_host",
  /** The upstream resolves to a private, loopback, link-local or otherwise non-public address. */
  "private_address",
  /** skip_tls_verification is on: the verifier never dials with verification off. */
  "tls_verification_skipped",
  /** The catalog's own control-plane listing host was resolved, never contacted. */
  "listing_host_resolved_only",
]);
export type UnverifiedReason = z.infer<typeof UnverifiedReason>;

/**
 * Codes of a refused check; the verifier throws them as AppError 422 and the control-plane
 * passes them on, so the API's 422 body says which it was.
 */
export const VERIFY_REFUSALS = {
  rejectedCredential: "provider.credential_rejected",
  unresolvable: "provider.listing_unresolvable",
  unreachable: "provider.listing_unreachable",
  vendorOutage: "provider.vendor_outage",
  timeout: "provider.listing_timeout",
  badResponse: "provider.listing_bad_response",
  noListing: "catalog.no_listing_endpoint",
} as const;

export const VerifyProviderRequest = z.object({
  catalog_provider_id: CatalogProviderId,
  upstream_url: z.string(),
  api_key: z.string().min(1),
  skip_tls_verification: z.boolean(),
  /**
   * Values for the catalog's extra headers (e.g. OpenAI-Organization), sent with the listing call.
   * Optional: requests from callers that predate the field carry none.
   */
  extra_values: z.record(z.string(), z.string()).optional(),
});
export type VerifyProviderRequest = z.infer<typeof VerifyProviderRequest>;

export const VerifyProviderReply = z.discriminatedUnion("outcome", [
  z.object({ outcome: z.literal("verified") }),
  z.object({ outcome: z.literal("unverified"), reason: UnverifiedReason }),
]);
export type VerifyProviderReply = z.infer<typeof VerifyProviderReply>;

export const DiscoverRequest = z.object({
  catalog_provider_id: CatalogProviderId,
  upstream_url: z.string(),
  api_key: z.string().min(1),
  skip_tls_verification: z.boolean().default(false),
  /** As in VerifyProviderRequest. */
  extra_values: z.record(z.string(), z.string()).optional(),
});
export type DiscoverRequest = z.infer<typeof DiscoverRequest>;

export const DiscoverReply = z.object({ models: z.array(DiscoveredModel) });
export type DiscoverReply = z.infer<typeof DiscoverReply>;

/** The provider-verifier: the only part that dials vendor listing endpoints. */
export const Verifier = {
  verifyProvider: endpoint("agn.verify.provider", VerifyProviderRequest, VerifyProviderReply),
  discover: endpoint("agn.verify.discover", DiscoverRequest, DiscoverReply),
} as const;
