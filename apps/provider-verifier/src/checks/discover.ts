import {
  type DiscoverReply,
  type DiscoverRequest,
  unprocessable,
  VERIFY_REFUSALS,
} from "@agentnet/contracts";
import { catalogModelsAsDiscovered, toDiscoveredModels } from "../domain/discovery";
import { deriveListingTarget } from "../domain/listing";
import { privateAddressRefusal } from "../domain/outcomes";
import { type CheckContext, requireCatalogEntry } from "./context";
import { listModels } from "./listing";

/**
 * Asks the vendor which models the credential can use (spec endpoint 16) and prices each from
 * the shipped table. Discovery has to dial, so the cases verification stores "unverified"
 * (no host, TLS checks off, a private address) are refusals here.
 */
export async function discoverModels(ctx: CheckContext, req: DiscoverRequest): Promise<DiscoverReply> {
  const entry = requireCatalogEntry(req.catalog_provider_id);
  const target = deriveListingTarget(entry.listing, req.upstream_url);
  switch (target.kind) {
    case "no_listing":
      throw unprocessable(
        VERIFY_REFUSALS.noListing,
        `${entry.name} has no model listing endpoint; use the catalog's own model list`,
      );
    case "no_host":
      throw unprocessable(VERIFY_REFUSALS.unresolvable, `${target.why}, so there is no listing to ask`);
    case "resolve_only":
      // Cloudflare's control-plane API lists gateways, not models, and is never contacted: the
      // models reachable through the gateway are the catalog's, at their vendors' prices.
      return { models: catalogModelsAsDiscovered(entry) };
    case "dial":
      break;
  }
  if (req.skip_tls_verification) {
    throw unprocessable(
      VERIFY_REFUSALS.unreachable,
      "TLS verification is skipped for this upstream and the verifier only dials with certificates checked; declare its models by hand",
    );
  }
  const listing = await listModels(ctx, entry, target, req.api_key, ctx.maxPages, req.extra_values);
  if (listing.kind === "private") throw privateAddressRefusal(listing.host, listing.address, listing.cls);
  return { models: toDiscoveredModels(entry.id, listing.models) };
}
