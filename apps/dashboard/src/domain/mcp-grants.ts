import { MAX_MCP_TOOL_PATTERNS, type McpServerGrant, McpToolPattern } from "@agentnet/contracts";

/**
 * The policy form's MCP grants (docs/API.md, "MCP servers"): one per server picked, each with its
 * tool filters as typed. `include` empty grants every tool the server lists; a tool matching
 * `exclude` is never granted by the grant.
 */
export interface GrantDraft {
  server_id: string;
  include: string;
  exclude: string;
}

/** Patterns as a filter field shows them. */
export const patternsText = (patterns: readonly string[]): string => patterns.join(", ");

export const grantDraft = (grant: McpServerGrant): GrantDraft => ({
  server_id: grant.server_id,
  include: patternsText(grant.include_tools),
  exclude: patternsText(grant.exclude_tools),
});

/**
 * The drafts after the server picker changed: a server still picked keeps its filters, a new one
 * starts with none (every tool), in the order picked.
 */
export const pickServers = (drafts: readonly GrantDraft[], serverIds: readonly string[]): GrantDraft[] =>
  serverIds.map(
    (id) => drafts.find((d) => d.server_id === id) ?? { server_id: id, include: "", exclude: "" },
  );

export type ParsedPatterns =
  | { patterns: string[]; error?: undefined }
  | { patterns?: undefined; error: string };

/**
 * A filter field's text as patterns: split on commas and line breaks, each once. Spaces are not
 * separators: a tool name has none, so "get issue" is a mistake to name rather than two patterns.
 * A pattern the contracts refuse is the field's error.
 */
export function parsePatterns(text: string): ParsedPatterns {
  const patterns = [
    ...new Set(
      text
        .split(/[,\n\r]+/)
        .map((pattern) => pattern.trim())
        .filter((pattern) => pattern !== ""),
    ),
  ];
  if (patterns.length > MAX_MCP_TOOL_PATTERNS) return { error: `at most ${MAX_MCP_TOOL_PATTERNS} patterns` };
  for (const pattern of patterns) {
    const parsed = McpToolPattern.safeParse(pattern);
    if (!parsed.success) return { error: `${pattern}: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  }
  return { patterns };
}

/**
 * The body's `mcp_servers`, or the errors of the filters that do not parse, keyed by the paths the
 * API names them by (`mcp_servers.0.exclude_tools`), so its errors and the form's land in one place.
 */
export function grantsBody(drafts: readonly GrantDraft[]): {
  grants: McpServerGrant[];
  errors: Record<string, string>;
} {
  const errors: Record<string, string> = {};
  const grants = drafts.map((draft, index) => {
    const include = parsePatterns(draft.include);
    const exclude = parsePatterns(draft.exclude);
    if (include.error !== undefined) errors[`mcp_servers.${index}.include_tools`] = include.error;
    if (exclude.error !== undefined) errors[`mcp_servers.${index}.exclude_tools`] = exclude.error;
    return {
      server_id: draft.server_id,
      include_tools: include.patterns ?? [],
      exclude_tools: exclude.patterns ?? [],
    };
  });
  return { grants, errors };
}

/** One grant in the policies list: the server's name and its filters, e.g. "issues (not delete_*)". */
export function grantSummary(grant: McpServerGrant, serverName: string): string {
  const filters = [
    grant.include_tools.length > 0 ? `only ${grant.include_tools.join(", ")}` : "",
    grant.exclude_tools.length > 0 ? `not ${grant.exclude_tools.join(", ")}` : "",
  ].filter(Boolean);
  return filters.length > 0 ? `${serverName} (${filters.join("; ")})` : serverName;
}
