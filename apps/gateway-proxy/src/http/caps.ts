import type { Hold } from "@agentnet/caps";
import {
  type Amount,
  applicableLimits,
  type CapCheck,
  type CounterPlan,
  denyReason,
  firingCheck,
  fitsUnderCap,
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

/**
 * The caps a request is under: one check per (measure, dimension, window) in force, and the
 * counters they name in the current windows.
 */
export interface CapsInForce {
  checks: CapCheck[];
  /** Some check caps USD: an unpriced model cannot be served. */
  usdCap: boolean;
  plans: CounterPlan[];
  /** When the first of the plans' windows ends (epoch ms): the plans are redrawn from then on. */
  plansUntil: number;
}

/**
 * Caps in force per account view (a new view on every config change), caller (a new object when
 * the token is looked up again) and policy. Working them out allocated a dozen objects and strings
 * per capped request; they change only with the config or at a window's end.
 */
const capsCache = new WeakMap<AccountView, WeakMap<Caller, Map<string, CapsInForce>>>();

export function capsInForce(
  caller: Caller,
  view: AccountView,
  policy: Pick<Policy, "id" | "source_groups" | "limits">,
  now: number,
): CapsInForce {
  let byCaller = capsCache.get(view);
  if (!byCaller) {
    byCaller = new WeakMap();
    capsCache.set(view, byCaller);
  }
  let byPolicy = byCaller.get(caller);
  if (!byPolicy) {
    byPolicy = new Map();
    byCaller.set(caller, byPolicy);
  }
  let caps = byPolicy.get(policy.id);
  if (!caps) {
    const checks = applicableLimits({
      user_id: caller.user_id,
      group_ids: caller.group_ids,
      policy,
      budget_rules: view.snapshot.budget_rules,
    });
    caps = { checks, usdCap: checks.some((check) => check.measure === "cost"), plans: [], plansUntil: 0 };
    byPolicy.set(policy.id, caps);
  }
  if (now >= caps.plansUntil) {
    caps.plans = planCounters(caller.account_id, caps.checks, now);
    caps.plansUntil = Math.min(
      ...caps.plans.map((plan) => (plan.key.window_start + plan.key.window_seconds) * 1000),
    );
  }
  return caps;
}

export type Headroom =
  | { kind: "held"; hold: Hold; plans: CounterPlan[] }
  | { kind: "deny"; reason: string; retryAfter: number }
  | { kind: "unavailable" };

/**
 * Holds `amount` on every counter the caps name, from this proxy's leases, or asks the leader when
 * they lack room (only then does it wait). Refused: the firing cap's reason, and Retry-After: the
 * window's end when settled usage alone leaves no room for the request, else a short delay.
 */
export function holdHeadroom(
  ctx: ProxyContext,
  accountId: string,
  caps: CapsInForce,
  amount: Amount,
): Headroom | Promise<Headroom> {
  const { plans } = caps;
  const hold = ctx.leases.holdFromLeases(plans, amount);
  if (hold) return { kind: "held", hold, plans };
  return askForHeadroom(ctx, accountId, plans, amount);
}

async function askForHeadroom(
  ctx: ProxyContext,
  accountId: string,
  plans: CounterPlan[],
  amount: Amount,
): Promise<Headroom> {
  const admission = await ctx.leases.admit(accountId, plans, amount);
  if (admission.kind === "held") return { kind: "held", hold: admission.hold, plans };
  if (admission.kind === "unavailable") return admission;
  const { plan, used } = admission;
  const now = Date.now();
  return {
    kind: "deny",
    reason: capDenyReason(plan, used, amount),
    // Headroom other leases hold frees up soon; settled usage only when the window ends.
    retryAfter: fitsUnderCap(used, plan, amount)
      ? HELD_RETRY_AFTER_SECONDS
      : Math.max(1, retryAfterSeconds(now, plan.key.window_start, plan.key.window_seconds)),
  };
}

/** The reason a counter refused `amount`: its first cap that settled usage plus `amount` passes. */
export function capDenyReason(plan: CounterPlan, used: Amount, amount: Amount): string {
  const check = firingCheck(plan, used, amount) ?? plan.checks[0];
  return check ? denyReason(check) : "llm_policy.token_cap_exceeded";
}
