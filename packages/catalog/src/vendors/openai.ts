import type { CatalogEntry, CatalogEntryModel } from "../types";
import { BEARER_TEMPLATE, model } from "./model";

/**
 * OpenAI list prices, Standard tier, USD per million tokens: developers.openai.com/api/docs/pricing,
 * checked on prices_checked_on against the stored copy of OpenAI's GPT-5.4 pro model page
 * (developers.openai.com/api/docs/models/gpt-5.4-pro) and reports of the pricing page that agree
 * with one another (Vercel AI Gateway's OpenAI rows, OpenAI's Codex rate card); a model no two of
 * them priced alike (gpt-5.1-codex-mini, the pro models) is not shipped. Cached prompt tokens
 * are a subset of input and bill at cached_input; there is no cache-write charge, so cache_read and
 * cache_creation are 0. gpt-4o-2024-05-13 is deliberately not an alias of gpt-4o: that snapshot
 * lists at $5 / $15.
 *
 * Long context: "for models with a 1.05M context window (GPT-5.4 and GPT-5.4 pro), prompts with
 * >272K input tokens are priced at 2x input and 1.5x output for the full session" (OpenAI's
 * GPT-5.4 pro model page); GPT-5.5, also a 1.05M window, is listed with the same rule. The cached
 * rate doubles with input. The 400K-window models (GPT-5 to 5.3, the 5.4 mini and nano) have one
 * price at every size. Pro models (no cached rate, Responses only) are left to provider rows.
 */
const LONG_CONTEXT_ABOVE = 272_000;

export const OPENAI_MODELS: CatalogEntryModel[] = [
  model("gpt-5.5", "GPT-5.5", 1_050_000, {
    input: 5,
    output: 30,
    cached_input: 0.5,
    long_context: { above_input_tokens: LONG_CONTEXT_ABOVE, input: 10, output: 45, cached_input: 1 },
  }),
  model("gpt-5.4", "GPT-5.4", 1_050_000, {
    input: 2.5,
    output: 15,
    cached_input: 0.25,
    long_context: { above_input_tokens: LONG_CONTEXT_ABOVE, input: 5, output: 22.5, cached_input: 0.5 },
  }),
  model("gpt-5.4-mini", "GPT-5.4 mini", 400_000, { input: 0.75, output: 4.5, cached_input: 0.075 }),
  model("gpt-5.4-nano", "GPT-5.4 nano", 400_000, { input: 0.2, output: 1.25, cached_input: 0.02 }),
  model("gpt-5.3-codex", "GPT-5.3-Codex", 400_000, { input: 1.75, output: 14, cached_input: 0.175 }),
  model("gpt-5.2-codex", "GPT-5.2-Codex", 400_000, { input: 1.75, output: 14, cached_input: 0.175 }),
  model("gpt-5.2", "GPT-5.2", 400_000, { input: 1.75, output: 14, cached_input: 0.175 }),
  model("gpt-5.1", "GPT-5.1", 400_000, { input: 1.25, output: 10, cached_input: 0.125 }, [
    "gpt-5.1-2025-11-13",
  ]),
  model("gpt-5.1-codex", "GPT-5.1-Codex", 400_000, { input: 1.25, output: 10, cached_input: 0.125 }),
  model("gpt-5.1-codex-max", "GPT-5.1-Codex-Max", 400_000, { input: 1.25, output: 10, cached_input: 0.125 }),
  model("gpt-5-codex", "GPT-5-Codex", 400_000, { input: 1.25, output: 10, cached_input: 0.125 }),
  model("gpt-5", "GPT-5", 400_000, { input: 1.25, output: 10, cached_input: 0.125 }, ["gpt-5-2025-08-07"]),
  model("gpt-5-mini", "GPT-5 mini", 400_000, { input: 0.25, output: 2, cached_input: 0.025 }, [
    "gpt-5-mini-2025-08-07",
  ]),
  model("gpt-5-nano", "GPT-5 nano", 400_000, { input: 0.05, output: 0.4, cached_input: 0.005 }, [
    "gpt-5-nano-2025-08-07",
  ]),
  model("gpt-4.1", "GPT-4.1", 1_047_576, { input: 2, output: 8, cached_input: 0.5 }, ["gpt-4.1-2025-04-14"]),
  model("gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, { input: 0.4, output: 1.6, cached_input: 0.1 }, [
    "gpt-4.1-mini-2025-04-14",
  ]),
  model("gpt-4.1-nano", "GPT-4.1 nano", 1_047_576, { input: 0.1, output: 0.4, cached_input: 0.025 }, [
    "gpt-4.1-nano-2025-04-14",
  ]),
  model("o3", "o3", 200_000, { input: 2, output: 8, cached_input: 0.5 }, ["o3-2025-04-16"]),
  model("o4-mini", "o4-mini", 200_000, { input: 1.1, output: 4.4, cached_input: 0.275 }, [
    "o4-mini-2025-04-16",
  ]),
  model("gpt-4o", "GPT-4o", 128_000, { input: 2.5, output: 10, cached_input: 1.25 }, [
    "gpt-4o-2024-08-06",
    "gpt-4o-2024-11-20",
  ]),
  model("gpt-4o-mini", "GPT-4o mini", 128_000, { input: 0.15, output: 0.6, cached_input: 0.075 }, [
    "gpt-4o-mini-2024-07-18",
  ]),
];

export const openai: CatalogEntry = {
  prices_checked_on: "2026-11-26",
  prices_source: "https://developers.openai.com/api/docs/pricing",
  id: "openai_api",
  name: "OpenAI",
  description: "OpenAI API (Chat Completions and Responses) at api.openai.com.",
  default_host: "api.openai.com",
  auth_header_name: "Authorization",
  auth_header_template: BEARER_TEMPLATE,
  default_content_type: "application/json",
  brand_color: "#10a37f",
  kind: "llm",
  api_flavor: "openai",
  extra_headers: [
    {
      name: "OpenAI-Organization",
      description: "Organization id (org-…) to bill when the key belongs to several organizations.",
      required: false,
    },
    {
      name: "OpenAI-Project",
      description: "Project id (proj_…) to bill when the key is a user key with access to several projects.",
      required: false,
    },
  ],
  identity_injection: {
    // OpenAI's own end-user field: the body's `user` string. It has no field for groups.
    json_metadata: { customizable: false, header: "", user_key: "user", groups_key: "" },
    header_pair: { customizable: true, end_user_id_header: "", tags_header: "" },
  },
  pricing_surfaces: ["input", "output", "cached_input"],
  models: OPENAI_MODELS,
  listing: { path: "/v1/models", shape: "openai_data" },
};
