import type { CatalogEntry } from "../types";
import { API_KEY_TOKEN } from "./model";
import { VERTEX_MODELS } from "./vertex";

/**
 * The Gemini API (Google AI Studio) at generativelanguage.googleapis.com: the same Gemini models as
 * Vertex, keyed by an API key in `x-goog-api-key`. Paid-tier list prices (ai.google.dev "Gemini
 * Developer API pricing") equal Vertex's Standard tier for these models.
 */
export const gemini: CatalogEntry = {
  prices_checked_on: "2026-11-22",
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
  models: VERTEX_MODELS,
  listing: { path: "/v1beta/models", shape: "gemini_models" },
};
