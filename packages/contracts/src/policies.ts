import { z } from "zod";
import { Description, Id, IdList, ResourceName, ResourceTimestamps } from "./common";
import { Limits, LimitsBody } from "./limits";
import { McpServerGrants } from "./mcp-servers";
import { PolicyRouting, PolicyRoutingBody } from "./routing";

/** Binds source groups to destination providers, optionally with guardrails and caps. */
export const Policy = z.object({
  id: Id,
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  source_groups: z.array(Id),
  destination_provider_ids: z.array(Id),
  guardrail_ids: z.array(Id),
  /**
   * Not in the spec: the MCP servers the policy grants its source groups, with a tool filter each.
   * Defaults to none: policies stored before MCP servers, and snapshots of older control-planes.
   */
  mcp_servers: McpServerGrants.default([]),
  limits: Limits.optional(),
  /** Not in the spec: how the policy picks among its providers. Absent means `DEFAULT_ROUTING`. */
  routing: PolicyRouting.optional(),
  ...ResourceTimestamps.shape,
});
export type Policy = z.infer<typeof Policy>;

/**
 * POST and PUT body (PUT replaces the whole policy). source_groups needs at least one entry, and
 * the policy at least one destination (a provider, or an MCP server): a policy with no source group
 * covers nobody and one with no destination authorises nothing, so either is a mistake.
 * destination_provider_ids stays required, as the spec has it; it may be empty only in a policy that
 * grants MCP servers.
 */
export const PolicyBody = z
  .object({
    name: ResourceName,
    description: Description.default(""),
    enabled: z.boolean().default(true),
    source_groups: IdList.min(1, "at least one source group is required"),
    destination_provider_ids: IdList,
    guardrail_ids: IdList.default([]),
    /** Not in the spec; omitted grants no MCP server. */
    mcp_servers: McpServerGrants.default([]),
    /** Omitted means the policy sets no caps of its own (budget rules still apply). */
    limits: LimitsBody.optional(),
    /** Not in the spec; omitted means `DEFAULT_ROUTING` (priority in list order, retries on). */
    routing: PolicyRoutingBody.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.destination_provider_ids.length === 0 && body.mcp_servers.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["destination_provider_ids"],
        message: "at least one destination provider (or MCP server) is required",
      });
    }
  });
export type PolicyBody = z.infer<typeof PolicyBody>;
