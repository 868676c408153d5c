import type { CatalogEntry, CatalogEntryModel } from "../types";
import { VERTEX_ANTHROPIC_BETAS } from "./anthropic-betas";
import { BEARER_TEMPLATE, model } from "./model";

/**
 * Google Vertex AI list prices for Gemini, Standard (on-demand) tier, prompts up to 200K
 * tokens (cloud.google.com "Vertex AI generative AI pricing"). Cached tokens are part of the
 * prompt count (OpenAI shape). Gemini 2.5 Pro prompts above 200K bill at $2.50 in / $15 out,
 * a tier not modelled here; cache storage per hour is not a token charge and is not included.
 */
export const VERTEX_MODELS: CatalogEntryModel[] = [
  model("gemini-2.5-pro", "Gemini 2.5 Pro", 1_048_576, { input: 1.25, output: 10, cached_input: 0.125 }),
  model("gemini-2.5-flash", "Gemini 2.5 Flash", 1_048_576, { input: 0.3, output: 2.5, cached_input: 0.03 }),
  model(
    "gemini-2.0-flash",
    "Gemini 2.0 Flash",
    1_048_576,
    { input: 0.15, output: 0.6, cached_input: 0.0375 },
    ["gemini-2.0-flash-001"],
  ),
];

export const vertex: CatalogEntry = {
  prices_checked_on: "2026-11-22",
  id: "vertex_api",
  name: "Google Vertex AI",
  description: "Gemini models on Google Cloud Vertex AI, addressed by region and project.",
  default_host: "us-central1-aiplatform.googleapis.com",
  // The key is a service-account key (JSON) with Vertex AI User, from which the proxy mints access
  // tokens (packages/vendor-auth), or a bare access token, which expires within an hour.
  auth_header_name: "Authorization",
  auth_header_template: BEARER_TEMPLATE,
  default_content_type: "application/json",
  brand_color: "#4285f4",
  kind: "llm",
  api_flavor: "vertex",
  anthropic_betas: VERTEX_ANTHROPIC_BETAS,
  extra_headers: [
    {
      name: "x-goog-user-project",
      description: "Project to bill for quota when it differs from the credential's project.",
      required: false,
    },
  ],
  identity_injection: {
    // Vertex `labels` only accept [a-z0-9_-]{0,63}; user ids do not fit, so headers only.
    header_pair: { customizable: true, end_user_id_header: "", tags_header: "" },
  },
  pricing_surfaces: ["input", "output", "cached_input"],
  models: VERTEX_MODELS,
  // On the regional inference host (the region is read from the upstream_url host).
  listing: { path: "/v1beta1/publishers/google/models", shape: "vertex_publisher_models" },
};
