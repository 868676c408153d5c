import { type Amount, amountOfToolCall, type Hold } from "@agentnet/caps";
import type { Caller, Policy } from "@agentnet/contracts";
import { usdToNanos } from "@agentnet/pricing";
import type { ProxyContext } from "../context";
import { capsInForce, holdHeadroom } from "../http/caps";
import type { AccountView } from "../snapshot/cache";

/** What a priced tool call's caps allowed: its hold, or why it is refused (its row's reason and status). */
export type ToolCallAdmission =
  | { kind: "free" }
  | { kind: "held"; hold: Hold; amount: Amount }
  | { kind: "refused"; status: number; reason: string; message: string; retryAfter?: number };

/**
 * Holds a tool call (one call, and its server's price) against the caps over the caller, as a model
 * call's estimate is held (src/http/caps.ts, packages/caps): the granting policy's limits and the
 * budget rules aimed at the caller, from this proxy's leases or the consumption leader's, with the
 * same guarantees (no overshoot, no refusal while a cap has room). The call counts on the tool-call
 * caps and its price on the USD caps; token caps it passes (it uses no tokens) but is counted on.
 * A caller under no cap at all is not held.
 */
export async function admitToolCall(
  ctx: ProxyContext,
  caller: Caller,
  view: AccountView,
  policy: Pick<Policy, "id" | "source_groups" | "limits">,
  pricePerCall: number,
): Promise<ToolCallAdmission> {
  const caps = capsInForce(caller, view, policy, Date.now());
  if (caps.checks.length === 0) return { kind: "free" };
  const amount = amountOfToolCall(usdToNanos(pricePerCall));
  const headroom = await holdHeadroom(ctx, caller.account_id, caps, amount);
  if (headroom.kind === "held") return { kind: "held", hold: headroom.hold, amount };
  if (headroom.kind === "unavailable") {
    return {
      kind: "refused",
      status: 503,
      reason: "consumption.unavailable",
      message: "usage limits cannot be checked right now; try again",
    };
  }
  return {
    kind: "refused",
    status: 429,
    reason: headroom.reason,
    message: `usage cap reached for this window: try again in ${headroom.retryAfter} s`,
    retryAfter: headroom.retryAfter,
  };
}
