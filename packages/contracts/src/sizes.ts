/**
 * How long or how many each caller-supplied value may be. Everything bounded here reaches an
 * event, a bus message or a stored row, where one oversized value can break a whole message (NATS
 * refuses a payload over 1 MiB) or every read of an account. The spec sets no limits, so each is
 * far above real use; docs/API.md "Limits" lists them. Replies stay unbounded: a row stored before
 * a bound existed must still read.
 */

/** Resource names: groups, users, tokens, providers, policies, guardrails, budget rules. */
export const MAX_NAME_LENGTH = 200;

/** Free text a person writes about a resource. */
export const MAX_DESCRIPTION_LENGTH = 2_000;

/** A model name, in a request to the proxy, a provider's model list or an allowlist; vendor ids are under 100. */
export const MAX_MODEL_LENGTH = 256;

/** Rows of a provider's model list, and entries of a guardrail's allowlist; vendors list a few hundred. */
export const MAX_MODELS = 10_000;

/** A request's session id (x-session-id and the other session headers, or Claude Code's metadata). */
export const MAX_SESSION_ID_LENGTH = 256;

/**
 * The most an account's gateway snapshot (its settings, providers with their model rows, policies,
 * guardrails and budget rules, as JSON) may take. Proxies and consumption hold it in memory and fetch
 * it in pages of max_payload, so it is not bound by one message; this keeps an account's share of
 * every proxy's memory, and the time a fresh proxy takes to load it, small. Ten thousand model rows
 * of 256-character ids and 500 policies take about 4 MB. A write past it is refused (422
 * `account.config_too_large`).
 */
export const MAX_ACCOUNT_CONFIG_BYTES = 8 * 1024 * 1024;

/** Ids in one list: a policy's groups, providers and guardrails, a rule's targets, a user's groups. */
export const MAX_ID_LIST = 1_000;

/** An upstream URL. */
export const MAX_URL_LENGTH = 2_048;

/** An email address (RFC 5321's longest path). */
export const MAX_EMAIL_LENGTH = 254;

/** A provider's upstream credential; a cloud access token is a few kilobytes at most. */
export const MAX_API_KEY_LENGTH = 16_384;

/** An HTTP header name a provider configures (identity stamping, extra headers). */
export const MAX_HEADER_NAME_LENGTH = 256;

/** A value of a provider's extra headers. */
export const MAX_HEADER_VALUE_LENGTH = 8_192;

/** Extra headers on one provider; the catalog declares at most a handful per vendor. */
export const MAX_EXTRA_VALUES = 64;

/** `anthropic-beta` values a provider lets through; Anthropic has published a few dozen in all. */
export const MAX_ANTHROPIC_BETAS = 64;

/** One `anthropic-beta` value: a name and a date, e.g. `context-1m-2025-08-07` (21 characters). */
export const MAX_ANTHROPIC_BETA_LENGTH = 64;

/** Free-form account settings text (JWT claim name, DNS domain, version) and each entry of their lists. */
export const MAX_SETTING_TEXT_LENGTH = 256;

/**
 * Highest price, in USD per 1000 tokens, of any rate a provider's model row sets: over 160 times
 * the dearest list price we know of (o1-pro output, $0.60). It keeps one request's cost, at every token
 * count packages/pricing bills (MAX_BILLABLE_TOKENS), inside its exact range of about $9 million.
 */
export const MAX_RATE_PER_1K = 100;

/** Highest USD cap of a limit, per group or user and window; well inside pricing's exact range. */
export const MAX_CAP_USD = 5_000_000;

/** Longest window of a limit: ten years. */
export const MAX_WINDOW_SECONDS = 10 * 365 * 86_400;

/** Longest access-log retention: a century (0 or less keeps rows forever). */
export const MAX_RETENTION_DAYS = 36_500;

/**
 * An MCP server's name. Clients prefix each tool with it, and add their own prefix for the gateway
 * (`mcp__{gateway}__{server}__{tool}`), where tool names are meant to stay within 128 characters.
 */
export const MAX_MCP_SERVER_NAME_LENGTH = 32;

/** One tool-name pattern of a policy's MCP grant; MCP tool names are meant to be 1 to 128 characters. */
export const MAX_MCP_TOOL_PATTERN_LENGTH = 128;

/** Patterns in one include or exclude list of a grant. */
export const MAX_MCP_TOOL_PATTERNS = 200;

/** The most one tool call may be priced at, in USD. */
export const MAX_PRICE_PER_CALL_USD = 100;
