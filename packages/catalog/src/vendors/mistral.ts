import type { CatalogEntry, CatalogEntryModel } from "../types";
import { BEARER_TEMPLATE, model } from "./model";

/**
 * Mistral La Plateforme list prices (mistral.ai/pricing). Mistral publishes no cached-input
 * discount, so every cache rate is 0 (bills at input). The `-latest` ids are moving aliases;
 * each row is priced for the snapshot it pointed to when the price was taken (its alias).
 */
export const MISTRAL_MODELS: CatalogEntryModel[] = [
  model("mistral-large-latest", "Mistral Large 3", 262_144, { input: 0.5, output: 1.5 }, [
    "mistral-large-2512",
  ]),
  model("mistral-medium-latest", "Mistral Medium 3.1", 131_072, { input: 0.4, output: 2 }, [
    "mistral-medium-2508",
  ]),
  model("mistral-small-latest", "Mistral Small 3.2", 131_072, { input: 0.1, output: 0.3 }, [
    "mistral-small-2506",
  ]),
  model("codestral-latest", "Codestral", 262_144, { input: 0.3, output: 0.9 }, ["codestral-2508"]),
];

export const mistral: CatalogEntry = {
  prices_checked_on: "2026-11-22",
  prices_source: "https://mistral.ai/pricing",
  id: "mistral_api",
  name: "Mistral",
  description: "Mistral AI La Plateforme API at api.mistral.ai.",
  default_host: "api.mistral.ai",
  auth_header_name: "Authorization",
  auth_header_template: BEARER_TEMPLATE,
  default_content_type: "application/json",
  brand_color: "#fa520f",
  kind: "llm",
  api_flavor: "mistral",
  extra_headers: [],
  identity_injection: {
    // The chat API has no end-user or metadata body field: headers only, and only if named.
    header_pair: { customizable: true, end_user_id_header: "", tags_header: "" },
  },
  pricing_surfaces: ["input", "output"],
  models: MISTRAL_MODELS,
  listing: { path: "/v1/models", shape: "mistral_data" },
};
