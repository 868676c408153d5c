import type { CatalogEntry } from "../types";
import { API_KEY_TOKEN, model } from "./model";
import { GEMINI_MODELS } from "./vertex";

/**
 * The Gemini API (Google AI Studio) at generativelanguage.googleapis.com, keyed by an API key in
 * `x-goog-api-key`. Paid-tier list prices (ai.google.dev/gemini-api/docs/pricing, "Standard"),
 * checked on prices_checked_on against stored reports of that page: the same as Vertex's for the
 * 3.x and 2.5 models, long-context tiers included (GEMINI_MODELS in vertex.ts says which), and
 * Gemini 2.0 Flash at $0.10 in / $0.40 out / $0.025 cached, below Vertex's rate.
 */
export const gemini: CatalogEntry = {
  prices_checked_on: "2026-11-26",
  prices_source: "https://ai.google.dev/gemini-api/docs/pricing",
  id: "gemini_api",
  name: "Google Gemini API",
  description: "Gemini models on the Gemini API (Google AI Studio), keyed by an API key.",
  default_host: "generativelanguage.googleapis.com",
  auth_header_name: "x-goog-api-key",
  auth_header_template: API_KEY_TOKEN,
  default_content_type: "application/json",
  brand_color: "#1a73e8",
  kind: "llm",
  api_flavor: "gemini",
  extra_headers: [],
  identity_injection: {
    // generateContent has no end-user or metadata field: headers only, and only if named.
    header_pair: { customizable: true, end_user_id_header: "", tags_header: "" },
  },
  pricing_surfaces: ["input", "output", "cached_input"],
  models: [
    ...GEMINI_MODELS,
    model(
      "gemini-2.0-flash",
      "Gemini 2.0 Flash",
      1_048_576,
      { input: 0.1, output: 0.4, cached_input: 0.025 },
      ["gemini-2.0-flash-001"],
    ),
  ],
  listing: { path: "/v1beta/models", shape: "gemini_models" },
};
