import type { GatewayProvider, RequestAttempt } from "@agentnet/contracts";
import type { HttpAnswer } from "@agentnet/service-kit";
import type { Pool } from "undici";
import type { ProxyContext } from "../context";
import { MAX_CAPTURE_CHARS } from "../domain/capture";
import { fallbackHoldExtra } from "../domain/estimate";
import { acceptedBetas, catalogHeaders, upstreamHeaders } from "../domain/forwarding";
import { identityHeaders, injectMetadata } from "../domain/identity";
import { editedJsonBytes } from "../domain/json-edit";
import { isRetryableStatus, networkError, retryAfterMs, SAME_PROVIDER_BACKOFF_MS } from "../domain/retry";
import { capDenyReason } from "../http/caps";
import {
  CredentialUnavailableError,
  type SignableRequest,
  type UpstreamAuth,
  upstreamAuth,
} from "../upstream/credential";
import {
  CLIENT_CLOSED_STATUS,
  type ForwardRequest,
  type ForwardResult,
  forward as relay,
} from "../upstream/forward";
import { privateUpstreamOf } from "../upstream/pools";
import { answerRestream, editForVendor, type VendorTarget, vendorTarget } from "../wires";
import { CappedStreamGrowth } from "./capped-stream";
import { requestRecord } from "./record";
import type { Admitted, Answered, Candidate, Failed, Forwarded, Relayed } from "./stages";
import { takeUpstreamSlot, upstreamBusy } from "./upstream-slot";

type AttemptResult = ForwardResult | Failed;

/**
 * Sends an admitted request to its candidates and relays the answer: per attempt the provider's
 * credential, the request as its vendor takes it, the upstream call. A failure before any byte of
 * the answer reached the client (`isRetryableStatus`, no answer, a stream that died before its
 * first byte) goes to the next candidate, or to the same one again when it is the only one (after
 * its retry-after), within the routing's attempts and time budget from the request's arrival. The
 * last attempt's failure is the client's: the vendor's answer relayed, or 502/504 when none came.
 * Failed when no answer came, and nothing has reached the client then. An upstream origin at this
 * proxy's bound is no vendor failure: the request moves on at once to another candidate when one
 * may follow, else waits its turn for a while, and is answered 503/529 (`upstreamBusy`) without
 * cooling the provider down.
 */
export async function forward(ctx: ProxyContext, admitted: Admitted): Promise<Forwarded> {
  const { received, candidates, routing } = admitted;
  const { request } = received;
  const attempts: RequestAttempt[] = [];
  let candidate = admitted.candidate;
  let target: VendorTarget | undefined;
  const maxAttempts = routing.retries_enabled ? routing.max_attempts : 1;
  const deadline = received.startedAt + routing.budget_ms;
  const bodies = new BodyCache(admitted);
  let next = 0;
  let announced: Candidate | undefined;
  let knownRetryAfterMs = 0;
  for (let attempt = 1; ; attempt++) {
    const following = candidates.length === 1 ? candidate : candidates[next + 1];
    const mayRetry = attempt < maxAttempts && following !== undefined && Date.now() < deadline;
    const mayMoveOn = mayRetry && candidates.length > 1;
    if (announced !== candidate) {
      // Charged as admitted at this candidate should this proxy die before the request ends.
      ctx.admissions.announce(
        requestRecord(ctx, received, { admitted, candidate }),
        admitted.tokens,
        candidate.pricing,
      );
      announced = candidate;
    }
    const attemptTarget = vendorTarget(
      candidate.provider.upstream_url,
      candidate.catalog.api_flavor,
      request.route,
      candidate.model,
      received.stream,
      request.query,
    );
    // The row names the last upstream an attempt could address.
    target = attemptTarget ?? target;
    const startedAt = performance.now();
    ctx.routing.started(candidate.provider.id);
    let result: AttemptResult;
    try {
      const slotWaitMs = mayMoveOn ? 0 : ctx.pools.waitMs;
      result = await attemptAt(
        ctx,
        admitted,
        candidate,
        attemptTarget,
        bodies.of(candidate),
        mayRetry,
        slotWaitMs,
      );
    } finally {
      ctx.routing.ended(candidate.provider.id);
    }
    const durationMs = Math.round(performance.now() - startedAt);
    if (result.outcome === "failed") {
      const other = candidates[next + 1];
      const moveOn = result.elsewhere && other && attempt < maxAttempts && Date.now() < deadline;
      if (attempt > 1 || moveOn)
        attempts.push(attemptOf(candidate, result.status, result.reason, durationMs));
      if (moveOn && request.res.destroyed) return forwarded(clientLeft(), candidate, attempts, target);
      if (!moveOn) return forwarded(withRetryAfter(result, knownRetryAfterMs), candidate, attempts, target);
      next++;
      const repriced = await reprice(ctx, admitted, other);
      if (repriced) return forwarded(repriced, candidate, attempts, target);
      candidate = other;
      continue;
    }
    if (result.outcome !== "retryable" && result.outcome !== "unreachable") {
      if (attempt > 1) attempts.push(attemptOf(candidate, result.status, "", durationMs));
      ctx.metrics
        ?.routed(request.route.label, candidate.provider, candidate.model)
        .forwarded(result, startedAt);
      if (result.status < 400) ctx.routing.cooldowns.succeeded(candidate.provider.id);
      else if (isRetryableStatus(result.status))
        coolingFailure(ctx, admitted, candidate, `status ${result.status}`, 0);
      return forwarded(result, candidate, attempts, target);
    }
    const failure = retryableFailure(result);
    const waitMs = failure.retryAfterMs;
    knownRetryAfterMs = Math.max(knownRetryAfterMs, waitMs);
    coolingFailure(ctx, admitted, candidate, failure.error || `status ${failure.status}`, waitMs);
    // The row lists attempts only when there is more than one: the first waits for a second.
    const listFailure = () => attempts.push(attemptOf(candidate, failure.status, failure.error, durationMs));
    if (attempt > 1) listFailure();
    const sameProvider = following === candidate;
    const pause = sameProvider ? waitMs || SAME_PROVIDER_BACKOFF_MS : 0;
    if (request.res.destroyed) return forwarded(clientLeft(), candidate, attempts, target);
    if (!mayRetry || !following || Date.now() + pause >= deadline) {
      return forwarded(lastFailure(request.res, failure, knownRetryAfterMs), candidate, attempts, target);
    }
    if (pause > 0) await sleep(pause);
    if (request.res.destroyed) return forwarded(clientLeft(), candidate, attempts, target);
    if (!sameProvider) next++;
    const repriced = await reprice(ctx, admitted, following);
    if (repriced) return forwarded(repriced, candidate, attempts, target);
    if (attempt === 1) listFailure();
    candidate = following;
  }
}

/**
 * One attempt at one candidate: its credential, a slot at its upstream origin (waiting up to
 * `slotWaitMs` for one), the request as its vendor takes it, the call.
 */
async function attemptAt(
  ctx: ProxyContext,
  admitted: Admitted,
  candidate: Candidate,
  target: VendorTarget | undefined,
  body: VendorBody,
  mayRetry: boolean,
  slotWaitMs: number,
): Promise<AttemptResult> {
  const { request, view } = admitted.received;
  const { provider } = candidate;
  if (!target) {
    return unusable(
      failed(
        502,
        "provider.upstream_url_incomplete",
        `the upstream_url of provider ${provider.name} does not name a Vertex project and location (…/v1/projects/{project}/locations/{location})`,
        "provider.upstream_url_incomplete",
      ),
    );
  }
  let auth: UpstreamAuth;
  try {
    const pending = upstreamAuth(ctx, view, provider, candidate.catalog);
    auth = pending instanceof Promise ? await pending : pending;
  } catch (error) {
    if (!(error instanceof CredentialUnavailableError)) throw error;
    ctx.logger.error({ err: error, provider_id: provider.id }, "provider credential unavailable");
    return unusable(failed(502, "provider.credential_unavailable", error.message, ""));
  }
  const upstream = ctx.pools.get(target.origin, provider.skip_tls_verification);
  const forwarded = upstreamRequest(ctx, admitted, candidate, target, auth, body, mayRetry, upstream.pool);
  if (auth.sign) {
    try {
      Object.assign(forwarded.headers, await auth.sign(signable(target, forwarded)));
    } catch (error) {
      ctx.logger.error({ err: error, provider_id: provider.id }, "provider request cannot be signed");
      return unusable(
        failed(502, "provider.credential_unavailable", "the provider's key cannot sign the request", ""),
      );
    }
  }
  const slot = await takeUpstreamSlot(ctx, upstream, request.res, slotWaitMs);
  if (slot === "left") return clientLeft();
  if (slot === "busy") return upstreamBusy(request.wire, ctx.pools.waitMs);
  let result: ForwardResult;
  try {
    const relaying = relay(forwarded, request.res);
    ctx.admissions.behindUpstreamWrites();
    result = await relaying;
  } finally {
    upstream.slots.release();
  }
  if (result.outcome === "unreachable") {
    const refusal = privateUpstream(provider, result.error);
    if (refusal) return refusal;
    ctx.logger.warn({ err: result.error, provider_id: provider.id }, "upstream unreachable");
    return result;
  }
  // A vendor refusing the provider's key becomes an alert; any other answer costs this comparison.
  if (result.outcome !== "retryable" && result.status === 401) {
    ctx.credentialRejections.rejected(admitted.received.caller.account_id, provider.id, 401);
  }
  return result;
}

interface RetryableFailure {
  /** The vendor's status; 0 when none came. */
  status: number;
  error: string;
  retryAfterMs: number;
  /** The vendor's answer to relay should no other attempt follow; undefined when none came. */
  answer: Extract<ForwardResult, { outcome: "retryable" }> | undefined;
}

function retryableFailure(
  result: Extract<ForwardResult, { outcome: "retryable" | "unreachable" }>,
): RetryableFailure {
  if (result.outcome === "unreachable") {
    return { status: 0, error: networkError(result.error), retryAfterMs: 0, answer: undefined };
  }
  return {
    status: result.status,
    error: result.error,
    retryAfterMs: retryAfterMs(result.headers),
    answer: result.status === 0 ? undefined : result,
  };
}

/**
 * The client's answer once no attempt is left: the last vendor's own (status, headers, body), or,
 * when none came, 504 for a timeout and 502 otherwise.
 */
function lastFailure(res: HttpAnswer, failure: RetryableFailure, retryAfter: number): Relayed | Failed {
  const { answer } = failure;
  if (!answer) {
    const timeout = failure.error === "timeout";
    const noAnswer = failed(
      timeout ? 504 : 502,
      timeout ? "provider.timeout" : "provider.unreachable",
      timeout ? "the upstream provider did not answer in time" : "the upstream provider did not answer",
      "",
    );
    return withRetryAfter(noAnswer, retryAfter);
  }
  if (!res.destroyed && !res.headersSent) {
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }
  return { outcome: "relayed", status: answer.status };
}

/** A vendor said when to come back: the client is told too (in whole seconds, rounded up). */
function withRetryAfter(failure: Failed, retryAfter: number): Failed {
  if (retryAfter <= 0) return failure;
  return { ...failure, headers: { ...failure.headers, "retry-after": String(Math.ceil(retryAfter / 1000)) } };
}

/** What forwarding came to (`Forwarded`), the last target as the row names it. */
const forwarded = (
  outcome: Answered | Relayed | Failed,
  candidate: Candidate,
  attempts: RequestAttempt[],
  target: VendorTarget | undefined,
): Forwarded => ({
  outcome,
  candidate,
  attempts,
  target: target && { host: target.host, path: target.path },
});

/** An attempt as the row lists it (once there is more than one: the first is listed with the second). */
const attemptOf = (
  candidate: Candidate,
  status: number,
  error: string,
  durationMs: number,
): RequestAttempt => ({
  provider_id: candidate.provider.id,
  provider: candidate.provider.name,
  model: candidate.model,
  status,
  error,
  duration_ms: durationMs,
});

/** A retryable failure counts toward the provider's cooldown, which its account's reads show. */
function coolingFailure(
  ctx: ProxyContext,
  admitted: Admitted,
  candidate: Candidate,
  error: string,
  retryAfter: number,
) {
  const { id, name } = candidate.provider;
  ctx.routing.cooldowns.failed(admitted.received.caller.account_id, id, name, error, retryAfter);
}

/**
 * A fallback to a provider with other prices holds what the request could cost there: the hold
 * grows when that is more (and the request ends with the cap's refusal when it cannot), and is
 * left as it is when less (the request is settled at what it used).
 */
async function reprice(ctx: ProxyContext, admitted: Admitted, next: Candidate): Promise<Failed | undefined> {
  const { capped } = admitted;
  if (!capped) return undefined;
  const held = { input_tokens: admitted.tokens.input_tokens, output_tokens: capped.heldOutput };
  const extra = fallbackHoldExtra(capped.hold.amount, held, next.pricing);
  if (!extra) return undefined;
  const accountId = admitted.received.caller.account_id;
  const grown = await ctx.leases.extend(accountId, capped.hold, capped.plans, extra);
  if (grown.kind === "held") return undefined;
  if (grown.kind === "unavailable") {
    return failed(
      503,
      "consumption.unavailable",
      "usage limits cannot be checked right now; try again",
      "consumption.unavailable",
    );
  }
  const reason = capDenyReason(grown.plan, grown.used, extra);
  return failed(429, reason, "usage cap reached for this window", reason);
}

/** The `anthropic-beta` values the candidate accepts: the provider's own list wins over its catalog entry's. */
const acceptedBetaList = ({ provider, catalog }: Candidate) =>
  provider.anthropic_betas ?? catalog.anthropic_betas;

const BETA_HEADER_NAME = "anthropic-beta";

/** The betas a request sends: the provider's configured `anthropic-beta`, else the caller's where its wire forwards it. */
const BETA_HEADER = [{ name: BETA_HEADER_NAME }];

/** A body as one vendor takes it, and the headers that go with it. */
interface VendorBody {
  bytes: Buffer;
  headers: Record<string, string>;
}

/**
 * The body as each candidate's vendor takes it, serialised once per vendor and model: a fallback
 * to a provider of the same vendor and model replays the bytes the first attempt sent.
 */
class BodyCache {
  private sentTo: Candidate | undefined;
  private body: VendorBody = { bytes: Buffer.alloc(0), headers: {} };

  constructor(private readonly admitted: Admitted) {}

  of(candidate: Candidate): VendorBody {
    const last = this.sentTo;
    const same =
      last !== undefined &&
      last.provider.provider_id === candidate.provider.provider_id &&
      last.provider.metadata_disabled === candidate.provider.metadata_disabled &&
      last.provider.anthropic_betas === candidate.provider.anthropic_betas &&
      last.model === candidate.model;
    if (!same) this.body = serialisedBody(this.admitted, candidate);
    this.sentTo = candidate;
    return this.body;
  }
}

/**
 * The body with the vendor's metadata and model, the rest as the caller sent it, byte for byte.
 * Each candidate's edits start from the caller's body: a fallback to another vendor or to a
 * provider without metadata carries none of the edits made for the one before.
 */
function serialisedBody(admitted: Admitted, candidate: Candidate): VendorBody {
  const { request, body: sent, bodyText, bodyBytes, metered, caller, stream } = admitted.received;
  const body = { ...sent };
  if (!candidate.provider.metadata_disabled && metered) {
    // Token counting takes no metadata (the vendor refuses fields it does not know there).
    injectMetadata(body, candidate.catalog.identity_injection.json_metadata, caller);
  }
  const accepted = acceptedBetaList(candidate);
  const sentBetas = catalogHeaders(
    request.wire,
    BETA_HEADER,
    candidate.provider.extra_values,
    request.req.headers,
  )[BETA_HEADER_NAME];
  const betas = sentBetas !== undefined && accepted ? acceptedBetas(sentBetas, accepted) : sentBetas;
  const headers = editForVendor(body, candidate.catalog.api_flavor, {
    route: request.route,
    model: candidate.model,
    streams: stream,
    betas,
    acceptedBetas: accepted,
  });
  return { bytes: editedJsonBytes(bodyText, bodyBytes, sent, body), headers };
}

/** A request to sign with the provider's keys (AWS's SigV4): its URL, the headers it goes with, its body. */
function signable(target: VendorTarget, request: ForwardRequest): SignableRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = String(value);
  return {
    method: request.method,
    url: new URL(request.path, target.origin),
    headers,
    body: request.body ?? "",
  };
}

/**
 * The request as the candidate's vendor takes it: the caller's headers its wire forwards, then the
 * catalog's, the identity and the credential, through `pool` (the origin's, whose slot it holds).
 */
function upstreamRequest(
  ctx: ProxyContext,
  admitted: Admitted,
  candidate: Candidate,
  target: VendorTarget,
  auth: UpstreamAuth,
  body: VendorBody,
  mayRetry: boolean,
  pool: Pool,
): ForwardRequest {
  const { request, caller, metered } = admitted.received;
  const { provider, catalog } = candidate;
  const { wire } = request;
  const own: Record<string, string> = {
    ...catalogHeaders(wire, catalog.extra_headers, provider.extra_values, request.req.headers),
    ...body.headers,
    ...identityHeaders(provider, caller),
    // Metadata a vendor takes in a header (the body's is in `body`); none for token counting.
    ...(provider.metadata_disabled || !metered || !catalog.identity_injection.json_metadata?.header
      ? {}
      : injectMetadata(admitted.received.body, catalog.identity_injection.json_metadata, caller)),
    "content-type": "application/json",
  };
  if (auth.name !== undefined) own[auth.name.toLowerCase()] = auth.value;
  const { capped } = admitted;
  const headers = upstreamHeaders(wire, request.req.headers, own);
  // The betas are the dialect's to place (`BodyRequest.betas`): as this header only where it put them.
  const betas = body.headers[BETA_HEADER_NAME];
  if (betas === undefined) delete headers[BETA_HEADER_NAME];
  else headers[BETA_HEADER_NAME] = betas;
  return {
    pool,
    method: "POST",
    path: target.pathWithQuery,
    headers,
    body: body.bytes,
    wire,
    restream: answerRestream(catalog.api_flavor, request.route),
    captureLimit: admitted.capture.capture ? MAX_CAPTURE_CHARS : 0,
    growth:
      capped && admitted.received.sse
        ? new CappedStreamGrowth(
            ctx,
            caller.account_id,
            capped,
            candidate.pricing,
            admitted.tokens.input_tokens,
          )
        : undefined,
    mayRetry,
  };
}

/** An upstream this gateway refuses to connect to (a private address): no other attempt mends it. */
function privateUpstream(provider: GatewayProvider, error: unknown): Failed | undefined {
  const upstream = privateUpstreamOf(error);
  if (!upstream) return undefined;
  return unusable(
    failed(
      403,
      "provider.private_upstream",
      `the upstream of provider ${provider.name} (${upstream.host}) is a private address, which this gateway does not connect to (AGN_ALLOWED_PRIVATE_UPSTREAMS names the ones it does)`,
      "provider.private_upstream",
    ),
  );
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The client went away between attempts: its row says so (499), as for one that left mid-answer. */
const clientLeft = (): Failed =>
  failed(CLIENT_CLOSED_STATUS, "client.closed", "the client closed the request", "");

/** A failure of this provider alone (its credential, its address): another candidate may serve. */
const unusable = (failure: Failed): Failed => ({ ...failure, elsewhere: true });

const failed = (status: number, reason: string, message: string, denyReason: string): Failed => ({
  outcome: "failed",
  status,
  reason,
  message,
  denyReason,
});
