import {
  type BudgetRule,
  type CapDenyReason,
  type DimensionKind,
  type Limits,
  type Policy,
  ruleTargets,
} from "@agentnet/contracts";
import { usdToNanos } from "@agentnet/pricing";
import type { AmountMeasure } from "./amount";

export type LimitSource = "llm_policy" | "budget_rule";
export type Measure = "tokens" | "cost" | "calls";

/** Which measure of an `Amount` a check's measure caps. */
export const amountMeasureOf: Record<Measure, AmountMeasure> = {
  tokens: "tokens",
  cost: "costNanos",
  calls: "calls",
};

/** One cap in force for this request: a measure of one dimension over one window size. */
export interface CapCheck {
  source: LimitSource;
  source_id: string;
  measure: Measure;
  dimension_kind: DimensionKind;
  dimension_id: string;
  window_seconds: number;
  /** Tokens (input + output), nano-USD or tool calls; 0 means the dimension is counted but uncapped. */
  cap: number;
}

/** A limits object with the groups its group caps apply to. */
interface LimitsInForce {
  source: LimitSource;
  source_id: string;
  limits: Limits;
  groups: string[];
}

/** What of a budget rule decides whether and how it applies. */
export type CapRule = Pick<BudgetRule, "id" | "enabled" | "target_groups" | "target_users" | "limits">;

/** Who asks, under which policy, and the account's budget rules: all that decides which caps apply. */
export interface CapsInput {
  user_id: string;
  /** Every group of the caller (including the account's All group). */
  group_ids: readonly string[];
  /** The policy that authorised the request. */
  policy: Pick<Policy, "id" | "source_groups" | "limits">;
  budget_rules: readonly CapRule[];
}

/** The ids of `a` also in `b`, once each. Group lists are short: scans allocate less than Sets. */
const intersect = (a: readonly string[], b: readonly string[]): string[] =>
  a.filter((id, index) => b.includes(id) && a.indexOf(id) === index);

/** The request's source groups: the caller's groups through which the policy authorised it. */
export const sourceGroups = (request: CapsInput): string[] =>
  intersect(request.group_ids, request.policy.source_groups);

/**
 * A budget rule's limits for this request when the rule targets the caller (`ruleTargets`). Group
 * caps of a rule that targets groups count per targeted group the caller is in; of an account-wide
 * or user-targeted rule per source group of the request (docs/ARCHITECTURE.md).
 */
const ruleInForce = (rule: CapRule, request: CapsInput): LimitsInForce | undefined => {
  if (!ruleTargets(rule, request)) return undefined;
  const groups =
    rule.target_groups.length > 0 ? intersect(request.group_ids, rule.target_groups) : sourceGroups(request);
  return { source: "budget_rule", source_id: rule.id, limits: rule.limits, groups };
};

/** One check; literal objects of one shape, not spreads of a shared base: this runs per request. */
const checkOf = (
  limits: LimitsInForce,
  measure: Measure,
  window_seconds: number,
  dimension_kind: DimensionKind,
  dimension_id: string,
  cap: number,
): CapCheck => ({
  source: limits.source,
  source_id: limits.source_id,
  measure,
  dimension_kind,
  dimension_id,
  window_seconds,
  cap,
});

/** The user's check and one per group of `limits` for one measure. */
function addChecks(
  checks: CapCheck[],
  limits: LimitsInForce,
  userId: string,
  measure: Measure,
  windowSeconds: number,
  userCap: number,
  groupCap: number,
) {
  checks.push(checkOf(limits, measure, windowSeconds, "user", userId, userCap));
  for (const group of limits.groups) {
    checks.push(checkOf(limits, measure, windowSeconds, "group", group, groupCap));
  }
}

/**
 * applicableLimits: the policy's limits and every enabled budget rule that targets the user, one of
 * the user's groups, or the whole account, as one check per (measure, dimension, window). Checks
 * with cap 0 are uncapped but still name a counter that counts this request.
 */
export function applicableLimits(request: CapsInput): CapCheck[] {
  const inForce: LimitsInForce[] = [];
  if (request.policy.limits) {
    inForce.push({
      source: "llm_policy",
      source_id: request.policy.id,
      limits: request.policy.limits,
      groups: sourceGroups(request),
    });
  }
  for (const rule of request.budget_rules) {
    const rule_ = ruleInForce(rule, request);
    if (rule_) inForce.push(rule_);
  }
  const checks: CapCheck[] = [];
  for (const limits of inForce) {
    const { token_limit: tokens, budget_limit: budget, tool_call_limit: calls } = limits.limits;
    // A disabled limit is inert: no cap and no window in force.
    if (tokens.enabled) {
      addChecks(
        checks,
        limits,
        request.user_id,
        "tokens",
        tokens.window_seconds,
        tokens.user_cap,
        tokens.group_cap,
      );
    }
    if (budget.enabled) {
      addChecks(
        checks,
        limits,
        request.user_id,
        "cost",
        budget.window_seconds,
        usdToNanos(budget.user_cap_usd),
        usdToNanos(budget.group_cap_usd),
      );
    }
    if (calls?.enabled === true) {
      addChecks(
        checks,
        limits,
        request.user_id,
        "calls",
        calls.window_seconds,
        calls.user_cap,
        calls.group_cap,
      );
    }
  }
  return checks;
}

/** denyReason: which reason code a firing check reports. */
const reasonOfMeasure = { tokens: "token", cost: "budget", calls: "tool_call" } as const;

export const denyReason = (check: Pick<CapCheck, "source" | "measure">): CapDenyReason =>
  `${check.source}.${reasonOfMeasure[check.measure]}_cap_exceeded`;
