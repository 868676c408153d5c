import type { IncomingMessage, ServerResponse } from "node:http";
import { findCatalogModel, findCatalogProvider } from "@agentnet/catalog";
import { reachableProviders } from "@agentnet/gateway-rules";
import type { ProxyContext } from "../context";
import { listableModels } from "../domain/decision";
import { checkHost } from "../domain/host";
import { flavorFits, type Wire } from "../domain/wire";
import { accountView, authenticate } from "./auth";
import { sendError, sendJson } from "./errors";

/**
 * GET /v1/models: the models the caller may use on the reachable providers that speak the
 * route's format, in the OpenAI list shape, or Anthropic's when `anthropic-version` is sent;
 * GET /v1beta/models: the same in the Gemini API's shape, for Gemini clients. A model offered by
 * several providers is listed once (the first in policy order).
 */
export async function handleModels(
  ctx: ProxyContext,
  req: IncomingMessage,
  res: ServerResponse,
  listing: "gemini" | undefined,
  query: string,
): Promise<void> {
  const wire: Wire = listing ?? (req.headers["anthropic-version"] ? "anthropic" : "openai");
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

  const seen = new Map<string, { id: string; owner: string; label: string }>();
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
  if (wire === "gemini") {
    return sendJson(res, 200, {
      models: models.map((m) => ({
        name: `models/${m.id}`,
        displayName: m.label,
        supportedGenerationMethods: ["generateContent", "countTokens"],
      })),
    });
  }
  if (wire === "anthropic") {
    const createdAt = new Date(created * 1000).toISOString();
    return sendJson(res, 200, {
      data: models.map((m) => ({ type: "model", id: m.id, display_name: m.label, created_at: createdAt })),
      has_more: false,
      first_id: models[0]?.id ?? null,
      last_id: models[models.length - 1]?.id ?? null,
    });
  }
  sendJson(res, 200, {
    object: "list",
    data: models.map((m) => ({ id: m.id, object: "model", created, owned_by: m.owner })),
  });
}
