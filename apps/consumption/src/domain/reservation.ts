import type { DimensionKind, ReservationEstimate } from "@agentnet/contracts";
import { usdToNanos } from "@agentnet/pricing";
import type { CapCheck } from "./limits";
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

/** What a counter holds. committed_* = used + reserved, so a cap test reads one field per measure. */
export interface CounterState {
  committed_tokens: number;
  committed_cost_nanos: number;
  tokens_input: number;
  tokens_output: number;
  cost_nanos: number;
  /** Requests settled into this counter: a counter only ever reserved and released lists as nothing. */
  settled_requests: number;
}

export const EMPTY_STATE: CounterState = {
  committed_tokens: 0,
  committed_cost_nanos: 0,
  tokens_input: 0,
  tokens_output: 0,
  cost_nanos: 0,
  settled_requests: 0,
};

/** A counter the reservation touches, with the tightest cap per measure (undefined = uncapped). */
export interface CounterPlan {
  key: CounterKey;
  /** `chainId(key)`, computed once. */
  id: string;
  capTokens: number | undefined;
  capCostNanos: number | undefined;
  checks: CapCheck[];
}

/** The estimate in counter units: total tokens and nano-USD. */
export interface Amount {
  tokens: number;
  costNanos: number;
}

export const estimateAmount = (estimate: ReservationEstimate): Amount => ({
  tokens: estimate.input_tokens + estimate.output_tokens,
  costNanos: usdToNanos(estimate.cost_usd),
});

/** A stable text form of a counter key: the counter's id in memory and in the store. */
export const chainId = (key: CounterKey): string =>
  `${key.account_id}|${key.dimension_kind}|${key.dimension_id}|${key.window_seconds}|${key.window_start}`;

const tighter = (current: number | undefined, cap: number): number | undefined =>
  cap === 0 ? current : current === undefined ? cap : Math.min(current, cap);

/**
 * planReservation: the counters the applicable checks name, in the windows holding `nowMs`. Several
 * checks on one counter (a policy and a rule with the same window) share it; the tightest cap binds.
 */
export function planReservation(accountId: string, checks: CapCheck[], nowMs: number): CounterPlan[] {
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
    const plan = plans.get(id) ?? { key, id, capTokens: undefined, capCostNanos: undefined, checks: [] };
    if (check.measure === "tokens") plan.capTokens = tighter(plan.capTokens, check.cap);
    else plan.capCostNanos = tighter(plan.capCostNanos, check.cap);
    plan.checks.push(check);
    plans.set(id, plan);
  }
  return [...plans.values()];
}

/** fitsUnderCap: whether reserving `amount` keeps every cap of the counter: used + reserved + estimate <= cap. */
export const fitsUnderCap = (
  state: CounterState,
  caps: Pick<CounterPlan, "capTokens" | "capCostNanos">,
  amount: Amount,
): boolean =>
  (caps.capTokens === undefined || state.committed_tokens + amount.tokens <= caps.capTokens) &&
  (caps.capCostNanos === undefined || state.committed_cost_nanos + amount.costNanos <= caps.capCostNanos);

/**
 * firingCheck: which check to report when a counter refused. The first check the state exceeds (the
 * policy before rules); any capped one when a concurrent release made room meanwhile.
 */
export function firingCheck(plan: CounterPlan, state: CounterState, amount: Amount): CapCheck | undefined {
  const rank = (check: CapCheck) => (check.source === "llm_policy" ? 0 : 1);
  const capped = plan.checks.filter((check) => check.cap > 0).sort((a, b) => rank(a) - rank(b));
  const exceeded = capped.find((check) =>
    check.measure === "tokens"
      ? state.committed_tokens + amount.tokens > check.cap
      : state.committed_cost_nanos + amount.costNanos > check.cap,
  );
  return exceeded ?? capped[0];
}
