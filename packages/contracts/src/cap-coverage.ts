import { type BudgetRule, isAccountWide } from "./budget-rules";
import type { Limits } from "./limits";
import type { Policy } from "./policies";

/**
 * Which policy limits and budget rules count whom: the rule behind the caps the proxies enforce
 * (`applicableLimits` in @agentnet/caps), the policies that cover a caller and the caps the
 * dashboard shows beside each counter. Pure, so it runs in the browser too.
 */

/** A caller as coverage sees one: the user and all their groups (the account's All group included). */
export interface CoveredCaller {
  user_id: string;
  group_ids: readonly string[];
}

/** Whether a policy covers a caller of these groups: it is enabled and one of its source groups is theirs. */
export const policyCovers = (
  policy: Pick<Policy, "enabled" | "source_groups">,
  groupIds: readonly string[],
): boolean => policy.enabled && policy.source_groups.some((id) => groupIds.includes(id));

/** Whether a budget rule is in force for a caller: enabled, and aimed at them, one of their groups or the whole account. */
export const ruleTargets = (
  rule: Pick<BudgetRule, "enabled" | "target_groups" | "target_users">,
  caller: CoveredCaller,
): boolean =>
  rule.enabled &&
  (isAccountWide(rule) ||
    rule.target_users.includes(caller.user_id) ||
    rule.target_groups.some((id) => caller.group_ids.includes(id)));

/** The dimension of a counter: a user (with their groups) or a group. */
export type CountedDimension = { kind: "user"; caller: CoveredCaller } | { kind: "group"; group_id: string };

/** Limits that count a dimension, with the policy or budget rule that sets them. */
export interface CountingLimits {
  source: "llm_policy" | "budget_rule";
  source_id: string;
  source_name: string;
  limits: Limits;
}

type CoveragePolicy = Pick<Policy, "id" | "name" | "enabled" | "source_groups" | "limits">;
type CoverageRule = Pick<BudgetRule, "id" | "name" | "enabled" | "target_groups" | "target_users" | "limits">;

/**
 * limitsCounting: the limits whose caps count a dimension's counters, budget rules first. A user's:
 * every rule that targets them and every policy with limits that covers them. A group's: every
 * enabled rule aimed at it or at no group (such a rule's group caps count per source group of a
 * request, which any group may be) and every policy with limits it is a source group of.
 */
export function limitsCounting(
  dimension: CountedDimension,
  config: { policies: readonly CoveragePolicy[]; budget_rules: readonly CoverageRule[] },
): CountingLimits[] {
  const groupIds = dimension.kind === "user" ? dimension.caller.group_ids : [dimension.group_id];
  const rules = config.budget_rules.filter((rule) =>
    dimension.kind === "user"
      ? ruleTargets(rule, dimension.caller)
      : rule.enabled && (rule.target_groups.length === 0 || rule.target_groups.includes(dimension.group_id)),
  );
  const counting: CountingLimits[] = rules.map((rule) => ({
    source: "budget_rule",
    source_id: rule.id,
    source_name: rule.name,
    limits: rule.limits,
  }));
  for (const policy of config.policies) {
    if (policy.limits && policyCovers(policy, groupIds)) {
      counting.push({
        source: "llm_policy",
        source_id: policy.id,
        source_name: policy.name,
        limits: policy.limits,
      });
    }
  }
  return counting;
}
