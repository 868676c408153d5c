import type { CatalogEntry } from "../types";
import { BEARER_TEMPLATE } from "./model";

/**
 * Any OpenAI-compatible upstream (vLLM, Ollama, LiteLLM, an internal proxy…). No listing
 * endpoint is assumed and no models are shipped: the operator declares model rows and rates.
 */
export const custom: CatalogEntry = {
  prices_checked_on: "2026-11-22",
  // No prices are shipped: the operator's model rows are the price list.
  prices_source: null,
  id: "custom",
  name: "Custom (OpenAI-compatible)",
  description: "An OpenAI-compatible upstream at a URL you provide; declare its models and prices.",
  default_host: "",
  auth_header_name: "Authorization",
  auth_header_template: BEARER_TEMPLATE,
  default_content_type: "application/json",
  brand_color: "#6b7280",
  kind: "llm",
  api_flavor: "openai",
  extra_headers: [],
  identity_injection: {
    json_metadata: { customizable: true, header: "", user_key: "user", groups_key: "" },
    header_pair: {
      customizable: true,
      end_user_id_header: "X-AgentNet-User-Id",
      tags_header: "X-AgentNet-Groups",
    },
  },
  pricing_surfaces: ["input", "output", "cached_input"],
  models: [],
  listing: null,
};
