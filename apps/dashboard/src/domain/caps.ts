import type { BudgetRule, ConsumptionCounter, Limits, Policy } from "@agentnet/contracts";

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

interface LimitsHolder {
  limits: Limits;
  label: string;
  /** Whether the holder's limits count this counter's dimension. */
  covers: boolean;
}

const holdersFor = (counter: ConsumptionCounter, ctx: CapContext): LimitsHolder[] => {
  const isUser = counter.dimension_kind === "user";
  const userGroups = isUser ? ctx.groupsOfUser(counter.dimension_id) : [];
  const holders: LimitsHolder[] = [];
  for (const rule of ctx.rules) {
    if (!rule.enabled) continue;
    const accountWide = rule.target_groups.length === 0 && rule.target_users.length === 0;
    const covers = isUser
      ? accountWide ||
        rule.target_users.includes(counter.dimension_id) ||
        rule.target_groups.some((g) => userGroups.includes(g))
      : // Group caps of account-wide and user-targeted rules count per source group.
        rule.target_groups.length === 0 || rule.target_groups.includes(counter.dimension_id);
    holders.push({ limits: rule.limits, label: `budget rule "${rule.name}"`, covers });
  }
  for (const policy of ctx.policies) {
    if (!policy.enabled || !policy.limits) continue;
    const covers = isUser
      ? policy.source_groups.some((g) => userGroups.includes(g))
      : policy.source_groups.includes(counter.dimension_id);
    holders.push({ limits: policy.limits, label: `policy "${policy.name}"`, covers });
  }
  return holders.filter((h) => h.covers);
};

const tighter = (current: AppliedCap | undefined, next: AppliedCap): AppliedCap =>
  current === undefined || next.cap < current.cap ? next : current;

/**
 * The caps that apply to a counter: among enabled budget rules and policy limits that count its
 * dimension over the same window size, the tightest positive cap (0 means uncapped) per measure.
 */
export function capsForCounter(counter: ConsumptionCounter, ctx: CapContext): CounterCaps {
  const caps: CounterCaps = {};
  const isUser = counter.dimension_kind === "user";
  for (const { limits, label } of holdersFor(counter, ctx)) {
    const t = limits.token_limit;
    if (t.enabled && t.window_seconds === counter.window_seconds) {
      const cap = isUser ? t.user_cap : t.group_cap;
      if (cap > 0) caps.tokens = tighter(caps.tokens, { cap, source: label });
    }
    const b = limits.budget_limit;
    if (b.enabled && b.window_seconds === counter.window_seconds) {
      const cap = isUser ? b.user_cap_usd : b.group_cap_usd;
      if (cap > 0) caps.cost = tighter(caps.cost, { cap, source: label });
    }
  }
  return caps;
}

/** Share of a cap used, 0..1 (clamped) for a progress bar. */
export const usedShare = (used: number, cap: number): number => (cap <= 0 ? 0 : Math.min(1, used / cap));

/** When the counter's window resets: its start plus its length. */
export const windowResetAt = (counter: ConsumptionCounter): Date =>
  new Date(Date.parse(counter.window_start_utc) + counter.window_seconds * 1000);
