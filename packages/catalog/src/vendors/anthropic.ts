import type { CatalogEntry, CatalogEntryModel } from "../types";
import { API_KEY_TOKEN, model, type PerMillion } from "./model";

/**
 * Anthropic list prices, USD per million tokens: platform.claude.com/docs/en/about-claude/pricing
 * ("Model pricing" and "Long context pricing"), checked on prices_checked_on against the stored copy
 * of that page (docs.anthropic.com/en/docs/about-claude/pricing). Cache reads and cache writes are
 * additive to input; cache_creation is the 5-minute cache-write rate, and 1-hour writes
 * (usage's cache_creation.ephemeral_1h_input_tokens) are priced at 1.6× it, the vendor's 2× input
 * (packages/pricing CACHE_1H_PER_5M). cached_input is 0: not an Anthropic surface. Models the page
 * did not show when checked (Claude Opus 5.5, Claude Code's default) stay unpriced until an admin
 * sets rates on the provider. The dated ids the /v1/models listing returns are aliases.
 *
 * Long context: a Claude Sonnet 4 or 4.5 request whose input (input + cache reads + cache writes)
 * is above 200K tokens (the 1M-context beta) is billed whole at $6 in / $22.50 out, the caching
 * multipliers applied on top ($0.60 reads, $7.50 5-minute writes, $12 1-hour writes). The 4.6 and
 * later models serve 1M tokens at their standard rates.
 */
const SONNET_4: PerMillion = {
  input: 3,
  output: 15,
  cache_read: 0.3,
  cache_creation: 3.75,
  long_context: { above_input_tokens: 200_000, input: 6, output: 22.5, cache_read: 0.6, cache_creation: 7.5 },
};

export const ANTHROPIC_MODELS: CatalogEntryModel[] = [
  model("claude-opus-5", "Claude Opus 5", 200_000, {
    input: 5,
    output: 25,
    cache_read: 0.5,
    cache_creation: 6.25,
  }),
  model("claude-opus-4-8", "Claude Opus 4.8", 200_000, {
    input: 5,
    output: 25,
    cache_read: 0.5,
    cache_creation: 6.25,
  }),
  model("claude-opus-4-7", "Claude Opus 4.7", 200_000, {
    input: 5,
    output: 25,
    cache_read: 0.5,
    cache_creation: 6.25,
  }),
  model("claude-opus-4-6", "Claude Opus 4.6", 200_000, {
    input: 5,
    output: 25,
    cache_read: 0.5,
    cache_creation: 6.25,
  }),
  model("claude-sonnet-4-6", "Claude Sonnet 4.6", 200_000, {
    input: 3,
    output: 15,
    cache_read: 0.3,
    cache_creation: 3.75,
  }),
  model(
    "claude-opus-4-5",
    "Claude Opus 4.5",
    200_000,
    { input: 5, output: 25, cache_read: 0.5, cache_creation: 6.25 },
    ["claude-opus-4-5-20251101"],
  ),
  model(
    "claude-opus-4-1",
    "Claude Opus 4.1",
    200_000,
    { input: 15, output: 75, cache_read: 1.5, cache_creation: 18.75 },
    ["claude-opus-4-1-20250805"],
  ),
  model("claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, SONNET_4, ["claude-sonnet-4-5-20250929"]),
  model("claude-sonnet-4", "Claude Sonnet 4", 200_000, SONNET_4, [
    "claude-sonnet-4-20250514",
    "claude-sonnet-4-0",
  ]),
  model(
    "claude-haiku-4-5",
    "Claude Haiku 4.5",
    200_000,
    { input: 1, output: 5, cache_read: 0.1, cache_creation: 1.25 },
    ["claude-haiku-4-5-20251001"],
  ),
  model(
    "claude-3-5-haiku",
    "Claude Haiku 3.5",
    200_000,
    { input: 0.8, output: 4, cache_read: 0.08, cache_creation: 1 },
    ["claude-3-5-haiku-20241022", "claude-3-5-haiku-latest"],
  ),
];

export const anthropic: CatalogEntry = {
  prices_checked_on: "2026-11-26",
  prices_source: "https://platform.claude.com/docs/en/about-claude/pricing",
  id: "anthropic_api",
  name: "Anthropic",
  description: "Anthropic Messages API at api.anthropic.com.",
  default_host: "api.anthropic.com",
  auth_header_name: "x-api-key",
  auth_header_template: API_KEY_TOKEN,
  default_content_type: "application/json",
  brand_color: "#d97757",
  kind: "llm",
  api_flavor: "anthropic",
  extra_headers: [
    {
      name: "anthropic-version",
      description: "Messages API version; Anthropic rejects requests without it.",
      required: true,
      default_value: "2023-06-01",
    },
    {
      name: "anthropic-beta",
      description: "Comma-separated beta features to enable, e.g. context-1m-2025-08-07.",
      required: false,
    },
  ],
  identity_injection: {
    // The Messages API accepts exactly one metadata key, metadata.user_id; no groups field.
    json_metadata: { customizable: false, header: "", user_key: "metadata.user_id", groups_key: "" },
    header_pair: { customizable: true, end_user_id_header: "", tags_header: "" },
  },
  pricing_surfaces: ["input", "output", "cache_read", "cache_creation"],
  models: ANTHROPIC_MODELS,
  listing: { path: "/v1/models", shape: "anthropic_data" },
};
