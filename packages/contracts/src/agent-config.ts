import { z } from "zod";
import { ApiFlavor, CatalogProviderId } from "./catalog";

/**
 * One provider the caller can reach. all_models_allowed is true when no model allowlist
 * restricts it for the caller; models then lists the declared or catalog models as a courtesy.
 * Never carries credentials, policy or guardrail configuration.
 */
export const AgentConfigProvider = z.object({
  name: z.string(),
  catalog_id: CatalogProviderId,
  api_flavor: ApiFlavor,
  all_models_allowed: z.boolean(),
  models: z.array(z.string()),
});
export type AgentConfigProvider = z.infer<typeof AgentConfigProvider>;

/**
 * Not in the spec: an MCP server the caller is granted, served by the gateway proxy at `path`
 * (docs/API.md "MCP gateway"); every one of them is also joined at `/mcp`.
 */
export const AgentConfigMcpServer = z.object({
  /** Optional: replies of control-planes older than per-user credentials lack it. */
  id: z.string().optional(),
  name: z.string(),
  description: z.string(),
  path: z.string(),
  /**
   * Present when the server is called with each member's own credential: its header, and whether
   * the caller set theirs (`PUT /mcp-servers/{id}/my-credential`); until then their calls are refused.
   */
  own_credential: z.object({ header_name: z.string(), set: z.boolean() }).optional(),
});
export type AgentConfigMcpServer = z.infer<typeof AgentConfigMcpServer>;

/**
 * What an agent needs to reach the gateway. configured is false only when the account has no
 * agent-network set up; a caller no policy covers reads true with an empty providers list.
 */
export const AgentConfig = z.object({
  configured: z.boolean(),
  endpoint: z.string(),
  providers: z.array(AgentConfigProvider),
  /** Not in the spec; defaults to none: replies of control-planes older than the MCP gateway lack it. */
  mcp_servers: z.array(AgentConfigMcpServer).default([]),
});
export type AgentConfig = z.infer<typeof AgentConfig>;
