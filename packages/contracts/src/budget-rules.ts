import { z } from "zod";
import { Id, IdList, ResourceName, ResourceTimestamps } from "./common";
import { Limits, LimitsBody } from "./limits";

/**
 * Account-level caps on groups and users. Empty target_groups together with empty
 * target_users means the rule applies to the whole account.
 */
export const BudgetRule = z.object({
  id: Id,
  name: z.string(),
  enabled: z.boolean(),
  target_groups: z.array(Id),
  target_users: z.array(Id),
  limits: Limits,
  ...ResourceTimestamps.shape,
});
export type BudgetRule = z.infer<typeof BudgetRule>;

/** Whether limits cap anything: an enabled limit with a group or user cap above 0. */
export const capsSomething = (limits: Limits): boolean =>
  (limits.token_limit.enabled && (limits.token_limit.group_cap > 0 || limits.token_limit.user_cap > 0)) ||
  (limits.budget_limit.enabled &&
    (limits.budget_limit.group_cap_usd > 0 || limits.budget_limit.user_cap_usd > 0)) ||
  (limits.tool_call_limit?.enabled === true &&
    (limits.tool_call_limit.group_cap > 0 || limits.tool_call_limit.user_cap > 0));

/**
 * POST and PUT body (PUT replaces the whole rule, so the same defaults apply). A rule whose limits
 * cap nothing is accepted, as the spec allows (a window below 60 s is refused only on an enabled
 * limit): an admin may keep a rule switched off while deciding its caps. The dashboard warns.
 */
export const BudgetRuleBody = z.object({
  name: ResourceName,
  enabled: z.boolean().default(true),
  target_groups: IdList.default([]),
  target_users: IdList.default([]),
  limits: LimitsBody,
});
export type BudgetRuleBody = z.infer<typeof BudgetRuleBody>;

/** True when the rule targets no group and no user, i.e. every caller of the account. */
export const isAccountWide = (rule: Pick<BudgetRule, "target_groups" | "target_users">): boolean =>
  rule.target_groups.length === 0 && rule.target_users.length === 0;
