import type { VerifyProviderReply, VerifyProviderRequest } from "@agentnet/contracts";
import { resolveOnce } from "../dial/resolve";
import { deriveListingTarget } from "../domain/listing";
import { refusalForFailure } from "../domain/outcomes";
import { type CheckContext, requireCatalogEntry } from "./context";
import { checkCredential, listModels } from "./listing";

/**
 * Checks a credential against the vendor's model listing before the provider is stored (spec
 * endpoint 18/20). Verified when the listing answers 2xx with a list in the catalog's shape;
 * the cases the spec stores unverified come back as `unverified` with no request sent; every
 * other failure is thrown as a 422 refusal.
 */
export async function verifyProvider(
  ctx: CheckContext,
  req: VerifyProviderRequest,
): Promise<VerifyProviderReply> {
  const entry = requireCatalogEntry(req.catalog_provider_id);
  checkCredential(ctx, entry, req.api_key, req.upstream_url);
  const target = deriveListingTarget(entry.listing, req.upstream_url);
  if (target.kind === "no_listing") return { outcome: "unverified", reason: "no_listing_endpoint" };
  if (target.kind === "no_host") return { outcome: "unverified", reason: "no_host" };
  // The verifier never dials with certificate checks off, and with them on such an upstream
  // would only fail: store it unverified, as the spec says.
  if (req.skip_tls_verification) return { outcome: "unverified", reason: "tls_verification_skipped" };

  if (target.kind === "resolve_only") {
    // A control-plane listing host (Cloudflare) is only resolved: it lists gateways, not the
    // models a key may use, and contacting it would need another credential.
    const signal = AbortSignal.timeout(ctx.dial.timeoutMs);
    const resolved = await resolveOnce(ctx.resolve, target.host, signal, ctx.dial.timeoutMs);
    if (!resolved.ok) throw refusalForFailure(resolved.failure);
    return { outcome: "unverified", reason: "listing_host_resolved_only" };
  }

  // The first page of the first path proves the key: further paths only add models to discover.
  const first = { ...target, morePaths: undefined };
  const listing = await listModels(ctx, entry, first, req.api_key, 1, req.extra_values);
  if (listing.kind === "private") {
    ctx.logger.info(
      { host: listing.host, address: listing.address, cls: listing.cls },
      "not dialing a private address",
    );
    return { outcome: "unverified", reason: "private_address" };
  }
  return { outcome: "verified" };
}
