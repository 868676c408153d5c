import { findCatalogModel, findCatalogProvider } from "@agentnet/catalog";
import { reachableProviders } from "@agentnet/gateway-rules";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import type { ProxyContext } from "../context";
import { listableModels } from "../domain/decision";
import { checkHost } from "../domain/host";
import { flavorFits, type ListedModel, type Listing } from "../wires";
import { accountView, authenticate } from "./auth";
import { sendError, sendJson } from "./errors";

/**
 * A model listing (`matchListing`: GET /v1/models, /v1beta/models, Bedrock's): the models the
 * caller may use on the reachable providers that speak the listing's wire, in its vendor's shape. A
 * model offered by several providers is listed once (the first in policy order).
 */
export async function handleModels(
  ctx: ProxyContext,
  req: HttpRequest,
  res: HttpAnswer,
  listing: Listing,
  query: string,
): Promise<void> {
  const { wire } = listing;
  const caller = await authenticate(ctx, req, res, wire, query);
  if (!caller) return;
  const view = await accountView(ctx, res, wire, caller.account_id);
  if (!view) return;
  const settings = view.snapshot.settings;
  if (!settings)
    return sendError(
      res,
      wire,
      403,
      "gateway.not_configured",
      "this account has no agent network configured",
    );
  const host = checkHost(settings.endpoint, req.headers.host);
  if (!host.ok)
    return sendError(res, wire, 403, host.reason, "this token's account is served at another endpoint");

  const seen = new Map<string, ListedModel>();
  for (const grant of reachableProviders(view.snapshot.providers, view.snapshot.policies, caller.group_ids)) {
    const catalog = findCatalogProvider(grant.provider.provider_id);
    if (!catalog || !flavorFits(wire, catalog.api_flavor)) continue;
    for (const id of listableModels(grant, view.guardrails)) {
      if (seen.has(id)) continue;
      const label = findCatalogModel(catalog.id, id)?.label ?? id;
      seen.set(id, { id, owner: grant.provider.name, label });
    }
  }
  const models = [...seen.values()];
  const created = Math.floor(Date.parse(view.snapshot.generated_at) / 1000) || 0;
  const answer = listing.answer(models, created);
  if (answer === undefined)
    return sendError(res, wire, 404, "gateway.not_found", "no such model is granted to you");
  sendJson(res, 200, answer);
}
