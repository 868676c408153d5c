import { Consumption } from "@agentnet/contracts";
import { type HandlerContext, handle } from "./context";

/** agn.consumption.lease: grant a proxy headroom on the counters it asks for, all or nothing. */
export const registerLeaseHandler = (ctx: HandlerContext) =>
  handle(ctx, Consumption.lease, (request) => ctx.keeper.lease(request));
