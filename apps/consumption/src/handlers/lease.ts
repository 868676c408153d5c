import { Consumption, leaseSubjectOfTerm } from "@agentnet/contracts";
import { type HandlerContext, handle } from "./context";

/**
 * agn.consumption.lease: grant a proxy headroom on the counters it asks for, all or nothing. Served
 * on the shared queue subject (proxies that have not heard a leader yet) and on this term's own
 * subject, which the leader announces (see CONSUMPTION_LEADER_SUBJECT). An ask refused while other
 * proxies' leases hold part of the headroom makes the leader tell them to give it back
 * (`reclaim`), so that the refused proxy, asking again, finds it.
 */
export const registerLeaseHandlers = (
  ctx: HandlerContext,
  term: string,
  reclaim: (counterIds: string[]) => void,
) => {
  const lease = async (request: Parameters<typeof ctx.keeper.lease>[0]) => {
    const reply = await ctx.keeper.lease(request);
    const counterIds = ctx.keeper.takeReclaims();
    if (counterIds.length > 0) reclaim(counterIds);
    return reply;
  };
  return [
    handle(ctx, Consumption.lease, lease),
    handle(ctx, { ...Consumption.lease, subject: leaseSubjectOfTerm(term) }, lease),
  ];
};
