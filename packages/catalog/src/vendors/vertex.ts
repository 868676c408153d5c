import type { CatalogEntry, CatalogEntryModel } from "../types";
import { ANTHROPIC_MODELS } from "./anthropic";
import { VERTEX_ANTHROPIC_BETAS } from "./anthropic-betas";
import { BEARER_TEMPLATE, model, type PerMillion } from "./model";

/**
 * Gemini list prices, USD per million tokens, Standard (on-demand / paid) tier, text input. Vertex
 * AI (cloud.google.com/vertex-ai/generative-ai/pricing) and the Gemini API
 * (ai.google.dev/gemini-api/docs/pricing) list the same rates for these models; checked on
 * prices_checked_on against stored reports of both pages (no live access). Cached tokens are part
 * of the prompt count (OpenAI shape) and bill at cached_input; thinking tokens are output. Cache
 * storage per hour is not a token charge and is not included.
 *
 * Long context: Gemini 2.5 Pro and the 3.x Pro models bill the whole request at the higher rates
 * once the prompt is above 200K tokens (2.5 Pro: $2.50 in / $15 out / $0.25 cached; 3.x Pro: $4 /
 * $18 / $0.40). The Flash models have one price. gemini-3-pro-preview now points to Gemini 3.1 Pro
 * at the same prices.
 */
const GEMINI_PRO_3: PerMillion = {
  input: 2,
  output: 12,
  cached_input: 0.2,
  long_context: { above_input_tokens: 200_000, input: 4, output: 18, cached_input: 0.4 },
};

export const GEMINI_MODELS: CatalogEntryModel[] = [
  model("gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", 1_048_576, GEMINI_PRO_3),
  model("gemini-3-pro-preview", "Gemini 3 Pro Preview", 1_048_576, GEMINI_PRO_3),
  model("gemini-3-flash-preview", "Gemini 3 Flash Preview", 1_048_576, {
    input: 0.5,
    output: 3,
    cached_input: 0.05,
  }),
  model("gemini-2.5-pro", "Gemini 2.5 Pro", 1_048_576, {
    input: 1.25,
    output: 10,
    cached_input: 0.125,
    long_context: { above_input_tokens: 200_000, input: 2.5, output: 15, cached_input: 0.25 },
  }),
  model("gemini-2.5-flash", "Gemini 2.5 Flash", 1_048_576, { input: 0.3, output: 2.5, cached_input: 0.03 }),
  model("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1_048_576, {
    input: 0.1,
    output: 0.4,
    cached_input: 0.01,
  }),
];

/**
 * Claude on Vertex, named as Vertex names it (platform.claude.com/docs/en/build-with-claude/
 * claude-on-vertex-ai, "API model IDs": the model id with its `@` version; the 4.6 models have no
 * version suffix), with Anthropic's id as an alias. Google lists Claude at Anthropic's own prices on
 * the global endpoint (cloud.google.com/vertex-ai/generative-ai/pricing, "Anthropic's Claude"), so
 * each takes the anthropic_api row's rates: cache reads, 5-minute writes (1-hour writes at 1.6× them)
 * and the Sonnet 4/4.5 long-context tier. Regional and multi-region endpoints of Sonnet 4.5 and later
 * cost 10% more: a provider on one sets its model rows.
 */
const onVertex = (anthropicId: string, vertexId: string): CatalogEntryModel => {
  const listed = ANTHROPIC_MODELS.find((m) => m.id === anthropicId);
  if (!listed) throw new Error(`no Anthropic model ${anthropicId}`);
  const { aliases: _aliases, ...rates } = listed;
  return { ...rates, id: vertexId, ...(vertexId === anthropicId ? {} : { aliases: [anthropicId] }) };
};

export const VERTEX_CLAUDE_MODELS: CatalogEntryModel[] = [
  onVertex("claude-opus-4-6", "claude-opus-4-6"),
  onVertex("claude-sonnet-4-6", "claude-sonnet-4-6"),
  onVertex("claude-opus-4-5", "claude-opus-4-5@20251101"),
  onVertex("claude-sonnet-4-5", "claude-sonnet-4-5@20250929"),
  onVertex("claude-haiku-4-5", "claude-haiku-4-5@20251001"),
  onVertex("claude-opus-4-1", "claude-opus-4-1@20250805"),
  onVertex("claude-sonnet-4", "claude-sonnet-4@20250514"),
];

/** Gemini 2.0 Flash on Vertex lists above the Gemini API's $0.10 / $0.40. */
export const VERTEX_MODELS: CatalogEntryModel[] = [
  ...GEMINI_MODELS,
  model(
    "gemini-2.0-flash",
    "Gemini 2.0 Flash",
    1_048_576,
    { input: 0.15, output: 0.6, cached_input: 0.0375 },
    ["gemini-2.0-flash-001"],
  ),
  ...VERTEX_CLAUDE_MODELS,
];

export const vertex: CatalogEntry = {
  prices_checked_on: "2026-11-26",
  prices_source: "https://cloud.google.com/vertex-ai/generative-ai/pricing",
  id: "vertex_api",
  name: "Google Vertex AI",
  description: "Gemini and Claude models on Google Cloud Vertex AI, addressed by region and project.",
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
  // Gemini answers in the OpenAI shape (cached_input); Claude in Anthropic's (cache reads and writes).
  pricing_surfaces: ["input", "output", "cached_input", "cache_read", "cache_creation"],
  models: VERTEX_MODELS,
  // On the regional inference host (the region is read from the upstream_url host).
  listing: { path: "/v1beta1/publishers/google/models", shape: "vertex_publisher_models" },
};
