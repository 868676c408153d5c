import { requestPaged } from "@agentnet/bus";
import { Consumption, ControlPlane } from "@agentnet/contracts";
import { type HandlerContext, handle } from "./context";

/**
 * agn.consumption.caps: the caps that apply to the caller now, with used, held and remaining. The
 * account's policies and budget rules come from the control-plane (the proxies' snapshot), the
 * counters from the leader's memory.
 */
export const registerCapsHandler = (ctx: HandlerContext) =>
  handle(ctx, Consumption.caps, async ({ caller }) => {
    const snapshot = await requestPaged(ctx.nc, ControlPlane.gatewaySnapshot, {
      account_id: caller.account_id,
    });
    return ctx.keeper.caps(caller, snapshot);
  });
