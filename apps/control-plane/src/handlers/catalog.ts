import { request } from "@agentnet/bus";
import { CATALOG, catalogPublicView } from "@agentnet/catalog";
import { ControlPlane, unprocessable } from "@agentnet/contracts";
import { providerCredentialAad, unseal } from "@agentnet/sealing";
import { requireAccountWideGrant, requireWriter } from "../domain/access";
import type { ProviderDoc } from "../store/agent-models";
import { type HandlerContext, handle, loadOwned } from "./context";

export function registerCatalogHandlers(ctx: HandlerContext) {
  handle(ctx, ControlPlane.catalogList, ({ caller }) => {
    requireAccountWideGrant(caller);
    return CATALOG.map(catalogPublicView);
  });

  /**
   * Model discovery: an unsaved credential (api_key with upstream_url), or a stored provider whose
   * credential and upstream are used (a sent upstream_url overrides the stored one). The listing
   * itself always comes from the catalog entry, decided by the verifier.
   */
  handle(ctx, ControlPlane.catalogDiscover, async ({ caller, body }) => {
    requireWriter(caller);
    let apiKey = body.api_key;
    let upstreamUrl = body.upstream_url;
    let skipTls = false;
    let extraValues: Record<string, string> = {};
    if (body.provider_id) {
      const stored = await loadOwned<ProviderDoc>(ctx.models.Provider, caller, body.provider_id, "provider");
      apiKey = unseal(
        ctx.sealingKey,
        stored.sealed_api_key,
        providerCredentialAad(caller.account_id, stored._id),
      );
      upstreamUrl ??= stored.upstream_url;
      skipTls = stored.skip_tls_verification;
      extraValues = stored.extra_values;
    }
    if (!apiKey || !upstreamUrl)
      throw unprocessable("catalog.discovery_input", "send api_key with upstream_url, or provider_id");
    return request(
      ctx.nc,
      ctx.verifier.discover,
      {
        catalog_provider_id: body.catalog_provider_id,
        upstream_url: upstreamUrl,
        api_key: apiKey,
        skip_tls_verification: skipTls,
        extra_values: extraValues,
      },
      { timeoutMs: ctx.verifyTimeoutMs },
    );
  });
}
