import { z } from "zod";
import { Description, Id, IdList, ResourceName, ResourceTimestamps } from "./common";
import { Limits, LimitsBody } from "./limits";
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
  limits: Limits.optional(),
  /** Not in the spec: how the policy picks among its providers. Absent means `DEFAULT_ROUTING`. */
  routing: PolicyRouting.optional(),
  ...ResourceTimestamps.shape,
});
export type Policy = z.infer<typeof Policy>;

/**
 * POST and PUT body (PUT replaces the whole policy). source_groups and
 * destination_provider_ids need at least one entry: a policy with no source group covers
 * nobody and one with no destination authorises nothing, so an empty list is a mistake.
 */
export const PolicyBody = z.object({
  name: ResourceName,
  description: Description.default(""),
  enabled: z.boolean().default(true),
  source_groups: IdList.min(1, "at least one source group is required"),
  destination_provider_ids: IdList.min(1, "at least one destination provider is required"),
  guardrail_ids: IdList.default([]),
  /** Omitted means the policy sets no caps of its own (budget rules still apply). */
  limits: LimitsBody.optional(),
  /** Not in the spec; omitted means `DEFAULT_ROUTING` (priority in list order, retries on). */
  routing: PolicyRoutingBody.optional(),
});
export type PolicyBody = z.infer<typeof PolicyBody>;
