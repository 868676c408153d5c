/**
 * The `anthropic-beta` values Claude on Vertex AI accepts: Vertex refuses a request naming a beta
 * it does not know (400), and Claude Code sends new ones with each release. Anthropic's own API
 * takes every beta, so its entry lists none (all pass). Kept from LiteLLM's per-provider table
 * (github.com/BerriAI/litellm, litellm/anthropic_beta_headers_config.json, `vertex_ai`), checked
 * 2026-11-26; a provider can name its own list (`anthropic_betas`).
 */
export const VERTEX_ANTHROPIC_BETAS: string[] = [
  "compact-2026-01-12",
  "compact-2026-09-04",
  "computer-use-2025-01-24",
  "computer-use-2025-11-24",
  "context-1m-2025-08-07",
  "context-management-2025-06-27",
  "dangerous-tool-use-2026-09-03",
  "interleaved-thinking-2025-05-14",
  "per-turn-control-2026-07-01",
  "thinking-binding-controls-2026-08-01",
  "thinking-display-updates-2026-08-18",
  "tool-search-tool-2025-10-19",
  "web-search-2025-03-05",
];
