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

/**
 * The `anthropic-beta` values Claude on Amazon Bedrock accepts. Bedrock takes them in the request
 * body (InvokeModel's `anthropic_beta` array; Converse's `additionalModelRequestFields.anthropic_beta`),
 * not as a header, and refuses a request naming one it does not know (400), so the proxy moves the
 * accepted values of the caller's header there and drops the rest. The union of two maintained
 * lists, checked 2026-11-29: agentgateway's `DEFAULT_ALLOWED_BETA_HEADERS`
 * (github.com/agentgateway/agentgateway, crates/llm/src/conversion/bedrock.rs, itself from AWS's
 * docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html)
 * and LiteLLM's per-provider table (litellm/anthropic_beta_headers_config.json, `bedrock`, the values
 * it forwards unchanged). A provider can name its own list (`anthropic_betas`).
 */
export const BEDROCK_ANTHROPIC_BETAS: string[] = [
  "compact-2026-01-12",
  "computer-use-2025-01-24",
  "computer-use-2025-11-24",
  "context-1m-2025-08-07",
  "context-management-2025-06-27",
  "dangerous-tool-use-2026-09-03",
  "dev-full-thinking-2025-05-14",
  "effort-2025-11-24",
  "fine-grained-tool-streaming-2025-05-14",
  "interleaved-thinking-2025-05-14",
  "mid-conversation-output-config-2026-07-01",
  "mid-conversation-tool-changes-2026-07-01",
  "output-128k-2025-02-19",
  "thinking-binding-controls-2026-08-01",
  "thinking-display-updates-2026-08-18",
  "token-efficient-tools-2025-02-19",
  "tool-examples-2025-10-29",
  "tool-search-tool-2025-10-19",
];
