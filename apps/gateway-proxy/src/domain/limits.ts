import type { BudgetRule, Caller, Limits, Policy, ReserveBudgetRule } from "@agentnet/contracts";

const limitsEnabled = (limits: Limits | undefined): boolean =>
  limits !== undefined && (limits.token_limit.enabled || limits.budget_limit.enabled);

const ruleTargets = (rule: BudgetRule, caller: Pick<Caller, "user_id" | "group_ids">): boolean =>
  (rule.target_groups.length === 0 && rule.target_users.length === 0) ||
  rule.target_users.includes(caller.user_id) ||
  rule.target_groups.some((group) => caller.group_ids.includes(group));

/** The enabled rules that target the caller, with only what consumption reads of them. */
export const reserveBudgetRules = (
  rules: readonly BudgetRule[],
  caller: Pick<Caller, "user_id" | "group_ids">,
): ReserveBudgetRule[] =>
  rules
    .filter((rule) => rule.enabled && ruleTargets(rule, caller))
    .map(({ id, enabled, target_groups, target_users, limits }) => ({
      id,
      enabled,
      target_groups,
      target_users,
      limits,
    }));

/**
 * Whether a reservation is needed: the authorising policy has a limit on, or an enabled budget
 * rule with a limit on targets the caller. Without one, no consumption round trip is made, and an
 * unavailable consumption service cannot block the request.
 */
export function limitsApply(
  policy: Pick<Policy, "limits">,
  rules: readonly BudgetRule[],
  caller: Pick<Caller, "user_id" | "group_ids">,
): boolean {
  if (limitsEnabled(policy.limits)) return true;
  return rules.some((rule) => rule.enabled && limitsEnabled(rule.limits) && ruleTargets(rule, caller));
}
