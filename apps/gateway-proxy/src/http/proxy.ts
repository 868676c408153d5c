import type { Hold } from "@agentnet/caps";
import { Events } from "@agentnet/contracts";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import type { ProxyContext } from "../context";
import { buildEvent, type RequestRecord } from "../events/build";
import { account, chargeOf } from "../request/account";
import { admit } from "../request/admit";
import { forward } from "../request/forward";
import { receive } from "../request/receive";
import { type RequestEnd, requestRecord } from "../request/record";
import type { Failed, InferenceRequest, Refused } from "../request/stages";
import type { Route } from "../wires";
import { sendError } from "./errors";
import { describeRequest } from "./tracing";

/**
 * One inference request through its stages (src/request/stages.ts): receive → admit → forward →
 * account. A request received (its account known and configured) ends here, whatever happened:
 * its row built from what the stages returned (`requestRecord`), its cap hold settled once with
 * what it is charged (nothing unless answered), then its one event published.
 */
export async function handleInference(
  ctx: ProxyContext,
  req: HttpRequest,
  res: HttpAnswer,
  route: Route,
  path: string,
  query: string,
): Promise<void> {
  const { operation, wire } = route;
  // The stages still name node:http's types; they use only what HTTP/2's compatibility request and
  // `HttpAnswer` have too (src/http/ingress-http2.int.test.ts runs them over h2c).
  const request: InferenceRequest = {
    req,
    res,
    route,
    operation,
    wire,
    path,
    query,
  };
  const received = await receive(ctx, request);
  if (!received) return;
  const end: RequestEnd = {};
  let hold: Hold | undefined;
  try {
    const admitted = await admit(ctx, received);
    if (admitted.outcome === "refused") {
      end.refusal = answerRefusal(request, admitted);
      return;
    }
    end.admitted = admitted;
    hold = admitted.capped?.hold;
    const forwarded = await forward(ctx, admitted);
    end.forwarded = forwarded;
    const { outcome } = forwarded;
    if (outcome.outcome === "failed") end.refusal = answerRefusal(request, outcome);
    else if (outcome.outcome !== "relayed") end.accounted = account(admitted, outcome, forwarded.candidate);
  } catch (error) {
    // The router answers 500 (gateway.internal) unless an answer had begun; the row says why.
    end.internalStatus = res.headersSent ? res.statusCode : 500;
    throw error;
  } finally {
    const record = requestRecord(ctx, received, end);
    if (hold) ctx.leases.finish(hold, chargeOf(record));
    publish(ctx, record, hold && ctx.leases.untilStored(hold));
  }
}

/** Answers in the vendor's error shape what the gateway refused or could not forward. */
function answerRefusal<T extends Refused | Failed>(request: InferenceRequest, refusal: T): T {
  sendError(request.res, request.wire, refusal.status, refusal.reason, refusal.message, refusal.headers);
  return refusal;
}

/**
 * Publishes the request's event; it never delays or fails the answer already sent. `stored` is
 * called once the stream has the event (or it was dropped, or there is none).
 */
function publish(ctx: ProxyContext, record: RequestRecord, stored?: () => void): void {
  record.series?.ended(record);
  if (!record.metered) {
    stored?.();
    return;
  }
  record.endedAt = Date.now();
  ctx.admissions.flushBefore(record.id);
  const event = buildEvent(record);
  const trace = describeRequest(event, record);
  ctx.publisher.enqueue(Events.requests(event.account_id), event, event.id, trace, stored);
}
