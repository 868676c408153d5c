import { Consumption, type ConsumptionCounter, hasAccountWideGrant } from "@agentnet/contracts";
import { nanosToUsd } from "@agentnet/pricing";
import type { CounterHead } from "../store/ledger";
import { type HandlerContext, handle } from "./context";

const toCounter = (head: CounterHead): ConsumptionCounter => ({
  dimension_kind: head.dimension_kind,
  dimension_id: head.dimension_id,
  window_seconds: head.window_seconds,
  window_start_utc: head.window_start.toISOString(),
  tokens_input: head.tokens_input,
  tokens_output: head.tokens_output,
  cost_usd: nanosToUsd(head.cost_nanos),
  updated_at: head.at.toISOString(),
});

/**
 * agn.consumption.list: every counter of the account, newest window first. A caller without the
 * account-wide grant sees only their own user counters and the counters of their groups, as the
 * spec scopes the other usage reads. Counters that only ever held reservations are not consumption.
 */
export function registerListHandler(ctx: HandlerContext) {
  handle(ctx, Consumption.list, async ({ caller }) => {
    const scope = hasAccountWideGrant(caller.role)
      ? {}
      : {
          $or: [
            { dimension_kind: "user", dimension_id: caller.user_id },
            { dimension_kind: "group", dimension_id: { $in: caller.group_ids } },
          ],
        };
    const heads = await ctx.ledger.counterHeads(caller.account_id, scope);
    return heads.filter((head) => head.settled_requests > 0).map(toCounter);
  });
}
