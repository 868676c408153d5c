import {
  amountMeasureOf,
  applicableLimits,
  type CapCheck,
  type CounterKey,
  type CounterState,
  chainId,
  committedAmountOf,
  type Measure,
  settledAmountOf,
  windowStart,
} from "@agentnet/caps";
import type { BudgetRule, Caller, CapStatus, Policy } from "@agentnet/contracts";
import { coveringPolicies } from "@agentnet/gateway-rules";
import { nanosToUsd } from "@agentnet/pricing";

/** A check's measure as the caps read names it. */
const MEASURE_NAMES: Record<Measure, CapStatus["measure"]> = {
  tokens: "tokens",
  cost: "usd",
  calls: "tool_calls",
};

/**
 * capStatuses: every cap that applies to the caller — of each enabled policy covering one of their
 * groups, and of each enabled budget rule that targets them — in the window holding `nowMs`, with
 * what its counter used and holds. A cap set by several policies (an account-wide rule under two
 * policies) is listed once. Uncapped limits (0) are not caps and are left out.
 */
export function capStatuses(
  caller: Pick<Caller, "account_id" | "user_id" | "group_ids">,
  config: { policies: readonly Policy[]; budget_rules: readonly BudgetRule[] },
  stateOf: (key: CounterKey) => CounterState | undefined,
  nowMs: number,
): CapStatus[] {
  const names = new Map<string, string>();
  for (const item of [...config.policies, ...config.budget_rules]) names.set(item.id, item.name);
  const seen = new Set<string>();
  const statuses: CapStatus[] = [];
  for (const policy of coveringPolicies(config.policies, caller.group_ids)) {
    const checks = applicableLimits({
      user_id: caller.user_id,
      group_ids: caller.group_ids,
      policy,
      budget_rules: config.budget_rules,
    });
    for (const check of checks) {
      if (check.cap === 0) continue;
      const key: CounterKey = {
        account_id: caller.account_id,
        dimension_kind: check.dimension_kind,
        dimension_id: check.dimension_id,
        window_seconds: check.window_seconds,
        window_start: windowStart(Math.floor(nowMs / 1000), check.window_seconds),
      };
      const id = `${check.source}|${check.source_id}|${check.measure}|${chainId(key)}`;
      if (seen.has(id)) continue;
      seen.add(id);
      statuses.push(statusOf(check, key, names.get(check.source_id) ?? "", stateOf(key)));
    }
  }
  return statuses;
}

function statusOf(
  check: CapCheck,
  key: CounterKey,
  name: string,
  state: CounterState | undefined,
): CapStatus {
  const measure = amountMeasureOf[check.measure];
  const used = state ? settledAmountOf(state)[measure] : 0;
  const committed = state ? committedAmountOf(state)[measure] : 0;
  const held = Math.max(0, committed - used);
  const remaining = Math.max(0, check.cap - used - held);
  const unit = (value: number) => (check.measure === "cost" ? nanosToUsd(value) : value);
  return {
    source: check.source,
    source_id: check.source_id,
    source_name: name,
    measure: MEASURE_NAMES[check.measure],
    dimension_kind: key.dimension_kind,
    dimension_id: key.dimension_id,
    window_seconds: key.window_seconds,
    window_start_utc: new Date(key.window_start * 1000).toISOString(),
    limit: unit(check.cap),
    used: unit(used),
    held: unit(held),
    remaining: unit(remaining),
  };
}
