import type { CatalogEntry, CatalogEntryModel } from "../types";
import { ANTHROPIC_MODELS } from "./anthropic";
import { BEARER_TEMPLATE } from "./model";
import { OPENAI_MODELS } from "./openai";

/**
 * Models reached through the gateway's unified OpenAI-compatible endpoint, named
 * `<provider>/<model>`. Cloudflare adds no per-token charge for bring-your-own-key traffic, so
 * each model keeps its vendor's list price. Anthropic models also carry their cache-read rate
 * as cached_input, because through the OpenAI-compatible endpoint cache reads arrive as cached
 * prompt tokens; through the /anthropic path they arrive in Anthropic shape.
 */
const viaGateway = (provider: string, models: CatalogEntryModel[]): CatalogEntryModel[] =>
  models.map(({ aliases, ...m }) => ({
    ...m,
    id: `${provider}/${m.id}`,
    cached_input_per_1k: m.cached_input_per_1k || m.cache_read_per_1k,
    ...(m.long_context
      ? {
          long_context: {
            ...m.long_context,
            cached_input_per_1k: m.long_context.cached_input_per_1k || m.long_context.cache_read_per_1k,
          },
        }
      : {}),
    ...(aliases === undefined ? {} : { aliases: aliases.map((alias) => `${provider}/${alias}`) }),
  }));

export const cloudflare: CatalogEntry = {
  // The models' prices are OpenAI's and Anthropic's (openai.ts, anthropic.ts, checked that day);
  // this page says Cloudflare adds no per-token charge to bring-your-own-key traffic.
  prices_checked_on: "2026-11-26",
  prices_source: "https://developers.cloudflare.com/ai-gateway/reference/pricing/",
  id: "cloudflare_api",
  name: "Cloudflare AI Gateway",
  description:
    "Cloudflare AI Gateway in front of other vendors; upstream_url is https://gateway.ai.cloudflare.com/v1/{account_id}/{gateway_id}/compat.",
  default_host: "gateway.ai.cloudflare.com",
  // The key is the downstream vendor's key; the gateway's own token goes in cf-aig-authorization.
  auth_header_name: "Authorization",
  auth_header_template: BEARER_TEMPLATE,
  default_content_type: "application/json",
  brand_color: "#f38020",
  kind: "llm",
  api_flavor: "cloud_gateway",
  extra_headers: [
    {
      name: "cf-aig-authorization",
      description:
        "Bearer <token> for an authenticated gateway (a Cloudflare API token with AI Gateway Run).",
      required: false,
    },
    {
      name: "cf-aig-cache-ttl",
      description: "Seconds to cache identical responses at the gateway; unset keeps the gateway's setting.",
      required: false,
    },
  ],
  identity_injection: {
    // Custom metadata shows up in the gateway's logs: a JSON object with at most five entries.
    json_metadata: {
      customizable: true,
      header: "cf-aig-metadata",
      user_key: "user_id",
      groups_key: "groups",
    },
    header_pair: { customizable: true, end_user_id_header: "", tags_header: "" },
  },
  pricing_surfaces: ["input", "output", "cached_input", "cache_read", "cache_creation"],
  models: [...viaGateway("openai", OPENAI_MODELS), ...viaGateway("anthropic", ANTHROPIC_MODELS)],
  // Control-plane listing of the account's gateways; {account_id} is the first path segment
  // after /v1/ in upstream_url. The host is only resolved, never contacted.
  listing: {
    host: "api.cloudflare.com",
    path: "/client/v4/accounts/{account_id}/ai-gateway/gateways",
    shape: "cloudflare_gateway",
  },
};
