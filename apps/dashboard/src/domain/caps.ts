import {
  type BudgetRule,
  type ConsumptionCounter,
  type CountedDimension,
  limitsCounting,
  type Policy,
} from "@agentnet/contracts";

/** The cap a counter is measured against, and where it comes from. */
export interface AppliedCap {
  cap: number;
  source: string;
}

export interface CounterCaps {
  tokens?: AppliedCap;
  cost?: AppliedCap;
}

export interface CapContext {
  rules: readonly BudgetRule[];
  policies: readonly Policy[];
  /** The groups of a user (the All group included), when the caller may know them. */
  groupsOfUser: (userId: string) => readonly string[];
}

const tighter = (current: AppliedCap | undefined, next: AppliedCap): AppliedCap =>
  current === undefined || next.cap < current.cap ? next : current;

/**
 * The caps that apply to a counter: among enabled budget rules and policy limits that count its
 * dimension over the same window size, the tightest positive cap (0 means uncapped) per measure.
 */
export function capsForCounter(counter: ConsumptionCounter, ctx: CapContext): CounterCaps {
  const isUser = counter.dimension_kind === "user";
  const dimension: CountedDimension = isUser
    ? {
        kind: "user",
        caller: { user_id: counter.dimension_id, group_ids: ctx.groupsOfUser(counter.dimension_id) },
      }
    : { kind: "group", group_id: counter.dimension_id };
  const caps: CounterCaps = {};
  for (const counting of limitsCounting(dimension, { policies: ctx.policies, budget_rules: ctx.rules })) {
    const { token_limit: t, budget_limit: b } = counting.limits;
    const source = `${counting.source === "budget_rule" ? "budget rule" : "policy"} "${counting.source_name}"`;
    if (t.enabled && t.window_seconds === counter.window_seconds) {
      const cap = isUser ? t.user_cap : t.group_cap;
      if (cap > 0) caps.tokens = tighter(caps.tokens, { cap, source });
    }
    if (b.enabled && b.window_seconds === counter.window_seconds) {
      const cap = isUser ? b.user_cap_usd : b.group_cap_usd;
      if (cap > 0) caps.cost = tighter(caps.cost, { cap, source });
    }
  }
  return caps;
}

/** Share of a cap used, 0..1 (clamped) for a progress bar. */
export const usedShare = (used: number, cap: number): number => (cap <= 0 ? 0 : Math.min(1, used / cap));

/** When the counter's window resets: its start plus its length. */
export const windowResetAt = (counter: ConsumptionCounter): Date =>
  new Date(Date.parse(counter.window_start_utc) + counter.window_seconds * 1000);
