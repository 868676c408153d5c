import type { Counter } from "@agentnet/caps";
import { Consumption, type ConsumptionCounter, hasAccountWideGrant } from "@agentnet/contracts";
import { nanosToUsd } from "@agentnet/pricing";
import { type HandlerContext, handle } from "./context";

const toCounter = (counter: Counter): ConsumptionCounter => ({
  dimension_kind: counter.dimension_kind,
  dimension_id: counter.dimension_id,
  window_seconds: counter.window_seconds,
  window_start_utc: new Date(counter.window_start * 1000).toISOString(),
  tokens_input: counter.tokens_input,
  tokens_output: counter.tokens_output,
  cost_usd: nanosToUsd(counter.cost_nanos),
  tool_calls: counter.tool_calls,
  updated_at: new Date(counter.updated_at).toISOString(),
});

/**
 * agn.consumption.list: every counter of the account, newest window first. A caller without the
 * account-wide grant sees only their own user counters and the counters of their groups, as the
 * spec scopes the other usage reads. Counters that only ever had headroom leased are not consumption.
 */
export const registerListHandler = (ctx: HandlerContext) =>
  handle(ctx, Consumption.list, ({ caller }) => {
    const groups = new Set(caller.group_ids);
    const visible = hasAccountWideGrant(caller.role)
      ? undefined
      : (counter: Counter) =>
          counter.dimension_kind === "user"
            ? counter.dimension_id === caller.user_id
            : groups.has(counter.dimension_id);
    return ctx.keeper.list(caller.account_id, visible).map(toCounter);
  });
