import {
  type Guardrail,
  type McpServer,
  type McpServerGrant,
  type Policy,
  policyCovers,
} from "@agentnet/contracts";

/**
 * Whether a tool name matches a grant's pattern: the whole name, where `*` stands for any run of
 * characters (none included) and every other character for itself.
 */
export function toolPatternMatches(pattern: string, tool: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === tool;
  const first = parts[0] ?? "";
  const last = parts[parts.length - 1] ?? "";
  if (tool.length < first.length + last.length) return false;
  if (!tool.startsWith(first) || !tool.endsWith(last)) return false;
  // Each middle part, leftmost first: taking the earliest match leaves the most room for the rest.
  let at = first.length;
  const end = tool.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = tool.indexOf(part, at);
    if (found === -1 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** One grant lets a tool through when its include list is empty or names it, and its exclude list does not. */
export const grantAllowsTool = (
  grant: Pick<McpServerGrant, "include_tools" | "exclude_tools">,
  tool: string,
) =>
  (grant.include_tools.length === 0 || grant.include_tools.some((p) => toolPatternMatches(p, tool))) &&
  !grant.exclude_tools.some((p) => toolPatternMatches(p, tool));

export interface McpServerReach<S, P> {
  server: S;
  /** The covering policies granting the server, each with its grant of it. */
  grants: { policy: P; grant: McpServerGrant }[];
}

/**
 * Enabled MCP servers a caller reaches, each with the covering policies that grant it, in the order
 * of the first policy granting them. Deny by default: a server no covering policy grants is not
 * reached, and a disabled server is unreachable whatever the policies say.
 */
export function reachableMcpServers<
  S extends Pick<McpServer, "id" | "enabled">,
  P extends Pick<Policy, "enabled" | "source_groups" | "mcp_servers">,
>(servers: readonly S[], policies: readonly P[], callerGroupIds: readonly string[]): McpServerReach<S, P>[] {
  const byId = new Map(servers.map((server) => [server.id, server]));
  const reach = new Map<string, McpServerReach<S, P>>();
  for (const policy of policies) {
    if (!policyCovers(policy, callerGroupIds)) continue;
    for (const grant of policy.mcp_servers) {
      const server = byId.get(grant.server_id);
      if (!server?.enabled) continue;
      const entry = reach.get(server.id) ?? { server, grants: [] };
      entry.grants.push({ policy, grant });
      reach.set(server.id, entry);
    }
  }
  return [...reach.values()];
}

type BlocklistSource = Pick<Guardrail, "checks">;

/** Whether an enabled tool blocklist among a policy's guardrails names the tool (`{server}__{tool}`). */
export function policyBlocksTool(
  policy: Pick<Policy, "guardrail_ids">,
  guardrails: ReadonlyMap<string, BlocklistSource>,
  joinedName: string,
): boolean {
  return policy.guardrail_ids.some((id) => {
    const blocklist = guardrails.get(id)?.checks.tool_blocklist;
    return blocklist?.enabled === true && blocklist.patterns.some((p) => toolPatternMatches(p, joinedName));
  });
}

/** Why no grant lets a tool through: none names it, or the guardrails of those that do block it. */
export type ToolRefusal = "mcp.tool_not_granted" | "guardrail.tool_blocked";

/**
 * The policy that lets a caller call `tool` on a reached server, or why none does. Grants add up: a
 * tool passes when any grant of the server lets it through and the guardrails of that grant's
 * policy do not block it (as a model passes when any granting policy lets it through).
 */
export function toolGrant<P extends Pick<Policy, "guardrail_ids">>(
  reach: { server: Pick<McpServer, "name">; grants: readonly { policy: P; grant: McpServerGrant }[] },
  tool: string,
  guardrails: ReadonlyMap<string, BlocklistSource>,
): { policy: P } | { refused: ToolRefusal } {
  const joinedName = `${reach.server.name}__${tool}`;
  let named = false;
  for (const { policy, grant } of reach.grants) {
    if (!grantAllowsTool(grant, tool)) continue;
    named = true;
    if (!policyBlocksTool(policy, guardrails, joinedName)) return { policy };
  }
  return { refused: named ? "guardrail.tool_blocked" : "mcp.tool_not_granted" };
}

/** Whether some grant lets the caller call `tool` (`toolGrant`). */
export const isToolGranted = <P extends Pick<Policy, "guardrail_ids">>(
  reach: { server: Pick<McpServer, "name">; grants: readonly { policy: P; grant: McpServerGrant }[] },
  tool: string,
  guardrails: ReadonlyMap<string, BlocklistSource>,
): boolean => "policy" in toolGrant(reach, tool, guardrails);
