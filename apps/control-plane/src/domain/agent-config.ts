import { findCatalogProvider } from "@agentnet/catalog";
import type { AgentConfig, Guardrail, McpServer, Policy, Provider, Settings } from "@agentnet/contracts";
import { modelAllowance, reachableMcpServers, reachableProviders } from "@agentnet/gateway-rules";

/**
 * The caller's agent config: providers reachable through enabled policies covering one of the
 * caller's groups, and per provider whether a model allowlist restricts it; and the MCP servers
 * granted to the caller that the proxy serves, each at its path. `configured` is false only without
 * a settings record; a caller no policy covers reads true with no providers. Never credentials,
 * policies or guardrail configuration.
 */
export function buildAgentConfig(input: {
  settings: Settings | null;
  providers: readonly Provider[];
  policies: readonly Policy[];
  guardrails: readonly Guardrail[];
  mcp_servers: readonly McpServer[];
  callerGroupIds: readonly string[];
  /** The per-user servers the caller set their own credential for. */
  ownCredentials: ReadonlySet<string>;
}): AgentConfig {
  if (!input.settings) return { configured: false, endpoint: "", providers: [], mcp_servers: [] };
  const guardrails = new Map(input.guardrails.map((guardrail) => [guardrail.id, guardrail]));
  const providers = reachableProviders(input.providers, input.policies, input.callerGroupIds).map(
    ({ provider, policies }) => {
      const catalog = findCatalogProvider(provider.provider_id);
      const allowance = modelAllowance(provider, policies, guardrails);
      // With no restriction, list the declared models, else the catalog's, as a courtesy.
      const courtesy =
        provider.models.length > 0
          ? provider.models.map((m) => m.id)
          : (catalog?.models.map((m) => m.id) ?? []);
      return {
        name: provider.name,
        catalog_id: provider.provider_id,
        api_flavor: catalog?.api_flavor ?? "openai",
        all_models_allowed: allowance.all,
        models: allowance.all ? courtesy : [...allowance.models].sort(),
      };
    },
  );
  const mcpServers = reachableMcpServers(input.mcp_servers, input.policies, input.callerGroupIds).map(
    ({ server }) => ({
      id: server.id,
      name: server.name,
      description: server.description,
      path: `/mcp/${server.name}`,
      ...(server.credential.kind === "per_user"
        ? {
            own_credential: {
              header_name: server.credential.header_name,
              set: input.ownCredentials.has(server.id),
            },
          }
        : {}),
    }),
  );
  return { configured: true, endpoint: input.settings.endpoint, providers, mcp_servers: mcpServers };
}
