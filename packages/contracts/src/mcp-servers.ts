import { z } from "zod";
import { ApiKey, HttpHeaderName, UpstreamUrl } from "./catalog";
import { Description, Id, ResourceTimestamps, SealedSecret, Timestamp } from "./common";
import {
  MAX_ID_LIST,
  MAX_MCP_SERVER_NAME_LENGTH,
  MAX_MCP_TOOL_PATTERN_LENGTH,
  MAX_MCP_TOOL_PATTERNS,
  MAX_PRICE_PER_CALL_USD,
} from "./sizes";

/**
 * An MCP server's name: the `/mcp/{name}` path segment and the `{name}__{tool}` prefix of its tools
 * on `/mcp`. Lower-case letters, digits and single hyphens only: names split at the first `__`
 * and clients rewrite every other character (Claude Code turns anything outside `[A-Za-z0-9_-]`
 * into `_`), so a name must survive both unchanged.
 */
export const McpServerName = z
  .string()
  .max(MAX_MCP_SERVER_NAME_LENGTH, `name must be at most ${MAX_MCP_SERVER_NAME_LENGTH} characters`)
  .regex(
    /^[a-z0-9]+(?:-[a-z0-9]+)*$/,
    "name must be lower-case letters and digits, words joined by single hyphens",
  );

/**
 * How the gateway talks to the server: the Streamable HTTP transport (MCP 2025-03-26 and later),
 * or the older HTTP+SSE transport (2024-11-05: a GET event stream plus POSTs to the endpoint it names).
 */
export const McpTransport = z.enum(["streamable_http", "sse"]);
export type McpTransport = z.infer<typeof McpTransport>;

/** An OAuth client id, as RFC 6749 allows it (visible characters), bounded like other names. */
const OAuthClientId = z
  .string()
  .min(1, "must not be empty")
  .max(256, "must be at most 256 characters")
  .regex(/^[\x20-\x7e]+$/, "must be printable ASCII");

/** Space-separated scope tokens of RFC 6749 §3.3. */
const OAuthScope = z
  .string()
  .max(1024, "must be at most 1024 characters")
  .regex(
    /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/,
    "must be scope tokens separated by single spaces",
  );

/** A credential's value: write-only, sealed when stored, sent only to its server, never returned. */
const CredentialValue = ApiKey.regex(/^[^\r\n\0]*$/, "must not contain line breaks or NUL");

/**
 * The credential the gateway sends to the server, as a body writes it: none, one static header for
 * every caller (an API key, `Authorization: Bearer …`), or one header whose value each member sets
 * for themselves (`per_user`, through `/mcp-servers/{id}/my-credential`), so that the server sees
 * who calls and no caller's token reaches another's calls; or an OAuth client whose tokens the
 * gateway mints (`oauth_client_credentials`, the secret write-only like a header's value).
 */
export const McpCredentialBody = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("none") }),
  z.object({
    kind: z.literal("header"),
    header_name: HttpHeaderName.min(1),
    value: CredentialValue,
  }),
  z.object({ kind: z.literal("per_user"), header_name: HttpHeaderName.min(1) }),
  z.object({
    kind: z.literal("oauth_client_credentials"),
    token_url: UpstreamUrl,
    client_id: OAuthClientId,
    client_secret: CredentialValue.min(1, "must not be empty"),
    scope: OAuthScope.optional(),
  }),
]);
export type McpCredentialBody = z.infer<typeof McpCredentialBody>;

/** The credential as reads show it: its kind and header name, never its value. */
export const McpCredential = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("none") }),
  z.object({ kind: z.literal("header"), header_name: z.string() }),
  z.object({ kind: z.literal("per_user"), header_name: z.string() }),
  z.object({
    kind: z.literal("oauth_client_credentials"),
    token_url: z.string(),
    client_id: z.string(),
    scope: z.string().optional(),
  }),
]);
export type McpCredential = z.infer<typeof McpCredential>;

/** PUT `/mcp-servers/{id}/my-credential`: the caller's own value of a per-user server's header. */
export const McpUserCredentialBody = z.object({ value: CredentialValue.min(1, "must not be empty") });
export type McpUserCredentialBody = z.infer<typeof McpUserCredentialBody>;

/** What a member reads of their own credential for a per-user server: whether it is set, never its value. */
export const McpUserCredential = z.object({
  server_id: Id,
  header_name: z.string(),
  set: z.boolean(),
  /** When it was last set; absent while it is not. */
  updated_at: Timestamp.optional(),
});
export type McpUserCredential = z.infer<typeof McpUserCredential>;

/** agn.ctl.mcp_user_credential.of (the proxy): one member's credential for a per-user server, sealed. */
export const McpUserCredentialOf = z.object({ account_id: Id, server_id: Id, user_id: Id });
export const McpUserCredentialSealed = z.object({ sealed: SealedSecret.optional() });

/** USD charged per tool call, counted toward the caller's USD caps like a model call's cost. */
const PricePerCall = z
  .number()
  .min(0)
  .max(MAX_PRICE_PER_CALL_USD, `must be at most ${MAX_PRICE_PER_CALL_USD} (USD per call)`);

export const McpServer = z.object({
  id: Id,
  name: z.string(),
  description: z.string(),
  url: z.string(),
  transport: McpTransport,
  credential: McpCredential,
  enabled: z.boolean(),
  skip_tls_verification: z.boolean(),
  price_per_call: z.number(),
  ...ResourceTimestamps.shape,
});
export type McpServer = z.infer<typeof McpServer>;

export const CreateMcpServerBody = z.object({
  name: McpServerName,
  description: Description.default(""),
  url: UpstreamUrl,
  transport: McpTransport.default("streamable_http"),
  credential: McpCredentialBody.default({ kind: "none" }),
  enabled: z.boolean().default(true),
  skip_tls_verification: z.boolean().default(false),
  price_per_call: PricePerCall.default(0),
});
export type CreateMcpServerBody = z.infer<typeof CreateMcpServerBody>;

/**
 * PUT body. As for providers, an optional field left out keeps the stored value, so a rename cannot
 * re-enable a server or drop its credential; `credential`, when sent, replaces the stored one whole.
 */
export const UpdateMcpServerBody = z.object({
  name: McpServerName,
  description: Description.optional(),
  url: UpstreamUrl,
  transport: McpTransport.optional(),
  credential: McpCredentialBody.optional(),
  enabled: z.boolean().optional(),
  skip_tls_verification: z.boolean().optional(),
  price_per_call: PricePerCall.optional(),
});
export type UpdateMcpServerBody = z.infer<typeof UpdateMcpServerBody>;

/** The proxy's view: the credential's value travels sealed, opened only by the proxy. */
export const GatewayMcpServer = McpServer.extend({ sealed_credential: SealedSecret.optional() });
export type GatewayMcpServer = z.infer<typeof GatewayMcpServer>;

/**
 * A tool-name pattern of a grant: the tool's own name (as its server lists it), where `*` stands
 * for any run of characters. Tool names are `[A-Za-z0-9_.-]` (MCP 2025-11-25), some servers add `/`.
 */
export const McpToolPattern = z
  .string()
  .min(1, "must not be empty")
  .max(MAX_MCP_TOOL_PATTERN_LENGTH, `must be at most ${MAX_MCP_TOOL_PATTERN_LENGTH} characters`)
  .regex(/^[A-Za-z0-9_.\-/*]+$/, "must be letters, digits, _ . - / and the wildcard *");

const ToolPatterns = z
  .array(McpToolPattern)
  .max(MAX_MCP_TOOL_PATTERNS, `at most ${MAX_MCP_TOOL_PATTERNS} patterns`);

/**
 * A policy's grant of one MCP server to its source groups. `include_tools` empty means every tool
 * the server lists; a tool matching `exclude_tools` is never granted by this grant.
 */
export const McpServerGrant = z.object({
  server_id: Id,
  include_tools: ToolPatterns.default([]),
  exclude_tools: ToolPatterns.default([]),
});
export type McpServerGrant = z.infer<typeof McpServerGrant>;

/** A policy's grants, one per server: two grants of one server in one policy would be ambiguous. */
export const McpServerGrants = z
  .array(McpServerGrant)
  .max(MAX_ID_LIST, `at most ${MAX_ID_LIST} MCP servers`)
  .superRefine((grants, ctx) => {
    const seen = new Set<string>();
    grants.forEach((grant, index) => {
      if (seen.has(grant.server_id)) {
        ctx.addIssue({
          code: "custom",
          path: [index, "server_id"],
          message: `MCP server ${grant.server_id} is granted twice`,
        });
      }
      seen.add(grant.server_id);
    });
  });
