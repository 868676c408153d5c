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

/** Why an MCP server was stored without a check; none is an error. */
export const UnverifiedMcpReason = z.enum([
  /** An http:// URL: the verifier sends credentials over TLS only (the proxy relays as configured). */
  "plain_http",
  /** The server resolves to a private, loopback, link-local or otherwise non-public address. */
  "private_address",
  /** skip_tls_verification is on: the verifier never dials with verification off. */
  "tls_verification_skipped",
  /**
   * The server refused the check, which carries no credential: it takes each member's own
   * (`per_user`), and the verifier has none of them.
   */
  "per_member_credential",
  /**
   * The server refused the check, which carries no credential: it takes tokens minted by an OAuth
   * client credentials grant, which only the proxies mint (the verifier dials MCP servers only).
   */
  "oauth_client_credentials",
]);
export type UnverifiedMcpReason = z.infer<typeof UnverifiedMcpReason>;

/** Codes of a refused MCP server check, thrown as AppError 422 and passed on by the control-plane. */
export const MCP_VERIFY_REFUSALS = {
  rejectedCredential: "mcp_server.credential_rejected",
  unresolvable: "mcp_server.unresolvable",
  unreachable: "mcp_server.unreachable",
  outage: "mcp_server.outage",
  timeout: "mcp_server.timeout",
  badResponse: "mcp_server.bad_response",
} as const;

export const VerifyMcpServerRequest = z.object({
  url: z.string(),
  /** The header the server takes its credential in, with the value; absent for a server without one. */
  credential: z.object({ header_name: z.string(), value: z.string() }).optional(),
  skip_tls_verification: z.boolean(),
  /**
   * Why the check carries no credential although the server takes one: a 401 or 403 then stores it
   * unverified for that reason instead of refusing it.
   */
  credential_not_sent: z.enum(["per_member_credential", "oauth_client_credentials"]).optional(),
});
export type VerifyMcpServerRequest = z.infer<typeof VerifyMcpServerRequest>;

export const VerifyMcpServerReply = z.discriminatedUnion("outcome", [
  /** It initialized and listed its tools (how many, all of them, before any grant). */
  z.object({ outcome: z.literal("verified"), tools: z.number().int().min(0) }),
  z.object({ outcome: z.literal("unverified"), reason: UnverifiedMcpReason }),
]);
export type VerifyMcpServerReply = z.infer<typeof VerifyMcpServerReply>;

/** The provider-verifier: the only part that dials vendor listing endpoints and MCP servers on create. */
export const Verifier = {
  verifyProvider: endpoint("agn.verify.provider", VerifyProviderRequest, VerifyProviderReply),
  discover: endpoint("agn.verify.discover", DiscoverRequest, DiscoverReply),
  verifyMcpServer: endpoint("agn.verify.mcp_server", VerifyMcpServerRequest, VerifyMcpServerReply),
} as const;
