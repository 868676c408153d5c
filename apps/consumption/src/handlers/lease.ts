import { Consumption, leaseSubjectOfTerm } from "@agentnet/contracts";
import { type HandlerContext, handle } from "./context";

/**
 * agn.consumption.lease: grant a proxy headroom on the counters it asks for, all or nothing. Served
 * on the shared queue subject (proxies that have not heard a leader yet) and on this term's own
 * subject, which the leader announces (see CONSUMPTION_LEADER_SUBJECT).
 */
export const registerLeaseHandlers = (ctx: HandlerContext, term: string) => [
  handle(ctx, Consumption.lease, (request) => ctx.keeper.lease(request)),
  handle(ctx, { ...Consumption.lease, subject: leaseSubjectOfTerm(term) }, (request) =>
    ctx.keeper.lease(request),
  ),
];
