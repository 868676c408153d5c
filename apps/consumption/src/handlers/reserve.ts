import { Consumption } from "@agentnet/contracts";
import { applicableLimits } from "../domain/limits";
import { estimateAmount } from "../domain/reservation";
import { type HandlerContext, handle } from "./context";

/** agn.consumption.reserve: hold the request's worst case on every counter in force, or deny. */
export const registerReserveHandler = (ctx: HandlerContext) =>
  handle(ctx, Consumption.reserve, (request) =>
    ctx.keeper.reserve({
      account_id: request.account_id,
      request_id: request.request_id,
      user_id: request.user_id,
      checks: applicableLimits(request),
      amount: estimateAmount(request.estimate),
    }),
  );
