import { z } from "zod";
import { Id, ResourceName, ResourceTimestamps } from "./common";
import { Limits } from "./limits";

/** A display name: surrounding blanks are dropped so "  " cannot pass as a name. */

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

/** POST and PUT body (PUT replaces the whole rule, so the same defaults apply). */
export const BudgetRuleBody = z.object({
  name: ResourceName,
  enabled: z.boolean().default(true),
  target_groups: z.array(Id).default([]),
  target_users: z.array(Id).default([]),
  limits: Limits,
});
export type BudgetRuleBody = z.infer<typeof BudgetRuleBody>;

/** True when the rule targets no group and no user, i.e. every caller of the account. */
export const isAccountWide = (rule: Pick<BudgetRule, "target_groups" | "target_users">): boolean =>
  rule.target_groups.length === 0 && rule.target_users.length === 0;
