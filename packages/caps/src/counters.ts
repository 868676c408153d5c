import type { DimensionKind, ReservedCounter } from "@agentnet/contracts";
import type { Amount } from "./amount";
import { amountMeasureOf, type CapCheck } from "./limits";
import { windowStart } from "./windows";

/** One counter: a dimension in one epoch-aligned window. */
export interface CounterKey {
  account_id: string;
  dimension_kind: DimensionKind;
  dimension_id: string;
  window_seconds: number;
  /** Epoch seconds. */
  window_start: number;
}

/** A counter a request counts on, with the tightest cap per measure (undefined = uncapped). */
export interface CounterPlan {
  key: CounterKey;
  /** `chainId(key)`, computed once. */
  id: string;
  capTokens: number | undefined;
  capCostNanos: number | undefined;
  capCalls: number | undefined;
  checks: CapCheck[];
}

/** A stable text form of a counter key: the counter's id in memory and in the store. */
export const chainId = (key: CounterKey): string =>
  `${key.account_id}|${key.dimension_kind}|${key.dimension_id}|${key.window_seconds}|${key.window_start}`;

/** The key of a counter as an event or a lease ask names it, in `accountId`. */
export const counterKeyOf = (accountId: string, counter: ReservedCounter): CounterKey => ({
  account_id: accountId,
  dimension_kind: counter.dimension_kind,
  dimension_id: counter.dimension_id,
  window_seconds: counter.window_seconds,
  window_start: counter.window_start,
});

/** The counter as events and lease asks name it (the account travels beside it). */
export const reservedCounterOf = ({
  dimension_kind,
  dimension_id,
  window_seconds,
  window_start,
}: CounterKey): ReservedCounter => ({ dimension_kind, dimension_id, window_seconds, window_start });

const tighter = (current: number | undefined, cap: number): number | undefined =>
  cap === 0 ? current : current === undefined ? cap : Math.min(current, cap);

/**
 * Whether a request of `amount` holds a lease on the counter: only where it adds to a measure the
 * counter caps. One adding nothing there (a model call on a counter only tool calls cap, a tool call
 * on one only tokens cap) cannot pass a cap of it, so it is only counted there: it asks no lease and
 * waits for no leader on that counter.
 */
export const holdsOn = (
  plan: Pick<CounterPlan, "capTokens" | "capCostNanos" | "capCalls">,
  amount: Amount,
): boolean =>
  (plan.capTokens !== undefined && amount.tokens > 0) ||
  (plan.capCostNanos !== undefined && amount.costNanos > 0) ||
  (plan.capCalls !== undefined && amount.calls > 0);

/**
 * planCounters: the counters the applicable checks name, in the windows holding `nowMs`. Several
 * checks on one counter (a policy and a rule with the same window) share it; the tightest cap binds.
 */
export function planCounters(accountId: string, checks: readonly CapCheck[], nowMs: number): CounterPlan[] {
  const plans = new Map<string, CounterPlan>();
  const nowSeconds = Math.floor(nowMs / 1000);
  for (const check of checks) {
    const key: CounterKey = {
      account_id: accountId,
      dimension_kind: check.dimension_kind,
      dimension_id: check.dimension_id,
      window_seconds: check.window_seconds,
      window_start: windowStart(nowSeconds, check.window_seconds),
    };
    const id = chainId(key);
    const plan = plans.get(id) ?? {
      key,
      id,
      capTokens: undefined,
      capCostNanos: undefined,
      capCalls: undefined,
      checks: [],
    };
    if (check.measure === "tokens") plan.capTokens = tighter(plan.capTokens, check.cap);
    else if (check.measure === "cost") plan.capCostNanos = tighter(plan.capCostNanos, check.cap);
    else plan.capCalls = tighter(plan.capCalls, check.cap);
    plan.checks.push(check);
    plans.set(id, plan);
  }
  return [...plans.values()];
}

/** fitsUnderCap: whether `committed + amount` stays within every cap of the counter. */
export const fitsUnderCap = (
  committed: Amount,
  caps: Pick<CounterPlan, "capTokens" | "capCostNanos" | "capCalls">,
  amount: Amount,
): boolean =>
  (caps.capTokens === undefined || committed.tokens + amount.tokens <= caps.capTokens) &&
  (caps.capCostNanos === undefined || committed.costNanos + amount.costNanos <= caps.capCostNanos) &&
  (caps.capCalls === undefined || committed.calls + amount.calls <= caps.capCalls);

/**
 * firingCheck: which check to report when a counter refused. The first check that `committed +
 * amount` exceeds (the policy before rules); any capped one when none does any more.
 */
export function firingCheck(plan: CounterPlan, committed: Amount, amount: Amount): CapCheck | undefined {
  const rank = (check: CapCheck) => (check.source === "llm_policy" ? 0 : 1);
  const capped = plan.checks.filter((check) => check.cap > 0).sort((a, b) => rank(a) - rank(b));
  const exceeded = capped.find(
    (check) => committed[amountMeasureOf[check.measure]] + amount[amountMeasureOf[check.measure]] > check.cap,
  );
  return exceeded ?? capped[0];
}
