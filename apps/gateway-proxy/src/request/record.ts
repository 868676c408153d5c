import { MAX_MODEL_LENGTH, MAX_SESSION_ID_LENGTH } from "@agentnet/contracts";
import type { ProxyContext } from "../context";
import { bounded } from "../domain/request-shape";
import type { RequestRecord } from "../events/build";
import type { Accounted, Admitted, Candidate, Failed, Forwarded, Received, Refused, Routed } from "./stages";

/** What the stages after `receive` returned for a request, as far as it got. */
export interface RequestEnd {
  /** Set once admitted: the row is an allow row. */
  admitted?: Admitted;
  /** Where the request goes, before `forwarded` says where it went (an admission's announcement). */
  candidate?: Candidate;
  forwarded?: Forwarded;
  accounted?: Accounted;
  /** The refusal or failure answered in the vendor's error shape. */
  refusal?: Refused | Failed;
  /** An error inside the stages: 500, unless an answer had begun (its status). */
  internalStatus?: number;
}

/**
 * The request's row, built from what `receive` and the later stages returned: the provider, policy
 * and model of the candidate that answered (else the first admitted, else the policy decision's),
 * the status and reason of how it ended, and what it used.
 */
export function requestRecord(ctx: ProxyContext, received: Received, end: RequestEnd): RequestRecord {
  const { request } = received;
  const candidate = end.forwarded?.candidate ?? end.candidate ?? end.admitted?.candidate;
  const routed: Routed | undefined = candidate
    ? { provider: candidate.provider, policyId: candidate.policy.id, model: candidate.model }
    : end.refusal?.outcome === "refused"
      ? end.refusal.routed
      : undefined;
  const target = end.forwarded?.target;
  const relayed = end.forwarded?.outcome.outcome === "relayed" ? end.forwarded.outcome : undefined;
  const { accounted, refusal } = end;
  const [status, denyReason] =
    end.internalStatus !== undefined
      ? [end.internalStatus, "gateway.internal"]
      : refusal
        ? [refusal.status, refusal.outcome === "refused" ? refusal.reason : refusal.denyReason]
        : accounted
          ? [accounted.status, accounted.denyReason]
          : [relayed?.status ?? 0, ""];
  const record: RequestRecord = {
    id: received.id,
    startedAt: received.startedAt,
    endedAt: 0,
    caller: received.caller,
    logged: received.logged,
    wire: request.wire,
    sourceIp: received.sourceIp,
    method: request.req.method ?? "POST",
    host: target?.host ?? "",
    path: target?.path ?? request.path,
    providerName: routed?.provider?.name ?? "",
    providerId: routed?.provider?.id ?? "",
    policyId: routed?.policyId ?? "",
    model: routed ? routed.model : bounded(received.model, MAX_MODEL_LENGTH),
    sessionId: bounded(received.sessionId, MAX_SESSION_ID_LENGTH),
    decision: end.admitted ? "allow" : "deny",
    denyReason,
    status,
    stream: accounted?.stream ?? received.stream,
    metered: received.metered,
    series: routed
      ? ctx.metrics?.routed(request.route.label, routed.provider, routed.model)
      : ctx.metrics?.unrouted(request.route.label),
  };
  const counters = end.admitted?.capped?.hold.counters;
  if (counters) record.counters = counters;
  if (end.forwarded) record.attempts = end.forwarded.attempts;
  if (accounted) {
    record.usage = accounted.usage;
    record.cost = accounted.cost;
    if (accounted.prompt !== undefined) record.prompt = accounted.prompt;
    if (accounted.completion !== undefined) record.completion = accounted.completion;
    record.responseModel = accounted.responseModel;
  }
  return record;
}
