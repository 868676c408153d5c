import type { Hold } from "@agentnet/caps";
import {
  type Amount,
  applicableLimits,
  type CapCheck,
  type CounterPlan,
  denyReason,
  firingCheck,
  planCounters,
  retryAfterSeconds,
} from "@agentnet/caps";
import type { Caller, Policy } from "@agentnet/contracts";
import type { ProxyContext } from "../context";
import type { AccountView } from "../snapshot/cache";

/**
 * How long a refused caller waits when the cap is not used up but held (by requests in flight, or
 * by other proxies' leases): holds end with their answers, and idle leases shrink within
 * `leaseIdleMs`, so capacity comes back within seconds, not at the window's end.
 */
export const HELD_RETRY_AFTER_SECONDS = 2;

/** The caps a request is under: one check per (measure, dimension, window) in force. */
export const capChecks = (
  caller: Caller,
  view: AccountView,
  policy: Pick<Policy, "id" | "source_groups" | "limits">,
) =>
  applicableLimits({
    user_id: caller.user_id,
    group_ids: caller.group_ids,
    policy,
    budget_rules: view.snapshot.budget_rules,
  });

export const hasUsdCap = (checks: readonly CapCheck[]) => checks.some((check) => check.measure === "cost");

export type Headroom =
  | { kind: "held"; hold: Hold; plans: CounterPlan[] }
  | { kind: "deny"; reason: string; retryAfter: number }
  | { kind: "unavailable" };

/**
 * Holds `amount` on every counter the checks name, from this proxy's leases (asking the leader
 * only when they lack room). Refused: the firing cap's reason, and Retry-After: the window's end
 * when settled usage alone leaves no room for the request, else a short delay.
 */
export async function holdHeadroom(
  ctx: ProxyContext,
  accountId: string,
  checks: CapCheck[],
  amount: Amount,
): Promise<Headroom> {
  const now = Date.now();
  const plans = planCounters(accountId, checks, now);
  const admission = await ctx.leases.admit(accountId, plans, amount);
  if (admission.kind === "held") return { kind: "held", hold: admission.hold, plans };
  if (admission.kind === "unavailable") return admission;
  const { plan, used } = admission;
  const full =
    (plan.capTokens !== undefined && used.tokens + amount.tokens > plan.capTokens) ||
    (plan.capCostNanos !== undefined && used.costNanos + amount.costNanos > plan.capCostNanos);
  return {
    kind: "deny",
    reason: capDenyReason(plan, used, amount),
    retryAfter: full
      ? Math.max(1, retryAfterSeconds(now, plan.key.window_start, plan.key.window_seconds))
      : HELD_RETRY_AFTER_SECONDS,
  };
}

/** The reason a counter refused `amount`: its first cap that settled usage plus `amount` passes. */
export function capDenyReason(plan: CounterPlan, used: Amount, amount: Amount): string {
  const check = firingCheck(plan, used, amount) ?? plan.checks[0];
  return check ? denyReason(check) : "llm_policy.token_cap_exceeded";
}
