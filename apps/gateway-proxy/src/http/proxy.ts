import type { IncomingMessage, ServerResponse } from "node:http";
import type { Hold } from "@agentnet/caps";
import { type Amount, type CounterPlan, NO_AMOUNT } from "@agentnet/caps";
import {
  Events,
  MAX_MODEL_LENGTH,
  MAX_RATE_PER_1K,
  MAX_SESSION_ID_LENGTH,
  renderAuthHeader,
} from "@agentnet/contracts";
import { computeCost } from "@agentnet/pricing";
import { apiKeyOf, type ProxyContext } from "../context";
import { type CapturePlan, captured, capturePlan } from "../domain/capture";
import { decide } from "../domain/decision";
import {
  type AdmittedTokens,
  admissionTokens,
  estimateTokens,
  holdAmount,
  interruptedUsage,
  outputCeiling,
  type Pricing,
  promptText,
  rateAboveMaximum,
  ratesFor,
  STREAM_OUTPUT_STEP_TOKENS,
} from "../domain/estimate";
import { catalogHeaders, forwardedQuery, upstreamHeaders } from "../domain/forwarding";
import { checkHost } from "../domain/host";
import { identityHeaders, injectMetadata } from "../domain/identity";
import { isJsonObject, type JsonObject } from "../domain/json";
import { bounded, identifierProblem, requestShapeProblem } from "../domain/request-shape";
import { sessionIdFrom } from "../domain/session";
import { isMetered, type Operation, wireOf } from "../domain/wire";
import { buildEvent, type RequestRecord } from "../events/build";
import type { AccountView } from "../snapshot/cache";
import { forward, type StreamGrowth } from "../upstream/forward";
import { privateUpstreamOf, upstreamTarget } from "../upstream/pools";
import { accountView, authenticate } from "./auth";
import { BodyNotUtf8, BodyTooLarge, readBody, sourceIp } from "./body";
import { capDenyReason, capsInForce, holdHeadroom } from "./caps";
import { sendError } from "./errors";
import { requestId } from "./request-id";
import { describeRequest } from "./tracing";

/** Publishes the request's event; it never delays or fails the answer already sent. */
function publish(ctx: ProxyContext, record: RequestRecord): void {
  record.series?.ended(record);
  if (!record.metered) return;
  const event = buildEvent({ ...record, endedAt: Date.now() });
  const trace = describeRequest(event, record);
  ctx.publisher.enqueue(Events.requests(event.account_id), event, event.id, trace);
}

/**
 * One inference request: authenticate → resolve the account → decide (host, policy, guardrails,
 * price) → hold cap headroom → forward → account for usage (the hold becomes the real usage) →
 * publish. Every request of a known, configured account ends in exactly one event.
 */
export async function handleInference(
  ctx: ProxyContext,
  req: IncomingMessage,
  res: ServerResponse,
  operation: Operation,
  path: string,
  query: string,
): Promise<void> {
  const wire = wireOf(operation);
  const caller = await authenticate(ctx, req, res, wire);
  if (!caller) return;
  let raw: string;
  try {
    raw = await readBody(req, ctx.options.bodyLimitBytes);
  } catch (error) {
    if (error instanceof BodyTooLarge)
      return sendError(res, wire, 413, "request.too_large", "request body too large");
    if (error instanceof BodyNotUtf8)
      return sendError(res, wire, 400, "request.invalid_utf8", "the request body is not valid UTF-8");
    throw error;
  }
  let body: JsonObject;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!isJsonObject(parsed)) throw new Error("not an object");
    body = parsed;
  } catch {
    return sendError(res, wire, 400, "request.invalid_json", "the request body must be a JSON object");
  }
  if (typeof body.model !== "string" || body.model === "") {
    return sendError(res, wire, 400, "request.model_missing", "the request body must name a model");
  }
  const shapeProblem = requestShapeProblem(body);
  if (shapeProblem) return sendError(res, wire, 400, "request.invalid", shapeProblem);

  const view = await accountView(ctx, res, wire, caller.account_id);
  if (!view) return;
  const settings = view.snapshot.settings;
  if (!settings) {
    return sendError(
      res,
      wire,
      403,
      "gateway.not_configured",
      "this account has no agent network configured",
    );
  }
  ctx.served.record(settings.endpoint, Date.now());
  const sessionId = sessionIdFrom(req.headers, body);
  const record: RequestRecord = {
    id: requestId(),
    startedAt: Date.now(),
    endedAt: 0,
    caller,
    logged: settings.enable_log_collection,
    wire,
    sourceIp: sourceIp(req, ctx.options.trustProxy),
    method: req.method ?? "POST",
    host: "",
    path,
    providerName: "",
    providerId: "",
    policyId: "",
    model: bounded(body.model, MAX_MODEL_LENGTH),
    sessionId: bounded(sessionId, MAX_SESSION_ID_LENGTH),
    decision: "deny",
    denyReason: "",
    status: 0,
    stream: body.stream === true,
    metered: isMetered(operation),
    series: ctx.metrics?.unrouted(path),
  };
  const deny = (status: number, reason: string, message: string, headers: Record<string, string> = {}) => {
    sendError(res, wire, status, reason, message, headers);
    publish(ctx, { ...record, status, denyReason: reason });
  };
  // Refused with a row, like every request of a configured account: the row holds them cut.
  const identifier = identifierProblem(body.model, sessionId);
  if (identifier) return deny(400, "request.invalid", identifier);

  const host = checkHost(settings.endpoint, req.headers.host);
  if (!host.ok) return deny(403, host.reason, "this token's account is served at another endpoint");

  const decision = decide({
    providers: view.snapshot.providers,
    policies: view.snapshot.policies,
    guardrails: view.guardrails,
    groupIds: caller.group_ids,
    requestedModel: body.model,
    wire,
  });
  record.model = decision.model;
  record.providerName = decision.provider?.name ?? "";
  record.providerId = decision.provider?.id ?? "";
  record.policyId = decision.policy?.id ?? "";
  record.series = ctx.metrics?.routed(path, decision.provider, decision.model);
  if (decision.decision === "deny") {
    const status = decision.reason === "gateway.flavor_mismatch" ? 400 : 403;
    return deny(status, decision.reason, denyMessage(decision.reason, decision.model));
  }
  const { provider, catalog, policy } = decision;
  const pricing = ratesFor(provider, catalog, decision.model);
  const overpriced = rateAboveMaximum(pricing.rates);
  if (overpriced) {
    return deny(
      403,
      "pricing.rate_out_of_range",
      `model ${decision.model} on provider ${provider.name} is priced above ${MAX_RATE_PER_1K} USD per 1000 tokens (${overpriced}); an admin must set its rates again`,
    );
  }

  const caps = record.metered ? capsInForce(caller, view, policy, Date.now()) : undefined;
  if (caps?.usdCap && !pricing.rates.pricing_known) {
    return deny(
      403,
      "pricing.unknown_model",
      `model ${decision.model} has no price on provider ${provider.name}, and a USD limit applies to you; an admin must set its rates (input_per_1k, output_per_1k) on the provider`,
    );
  }
  let capped: CappedRequest | undefined;
  const worst = estimateTokens(body, operation, outputCeiling(catalog, decision.model));
  // What the request holds under caps, and is charged should this proxy die before it ends.
  const admitted = admissionTokens(worst, body.stream === true);
  if (caps && caps.checks.length > 0) {
    const headroom = await holdHeadroom(ctx, caller.account_id, caps, holdAmount(admitted, pricing));
    if (headroom.kind === "unavailable") {
      return deny(503, "consumption.unavailable", "usage limits cannot be checked right now; try again");
    }
    if (headroom.kind === "deny") {
      return deny(429, headroom.reason, "usage cap reached for this window", {
        "retry-after": String(headroom.retryAfter),
      });
    }
    capped = {
      ...headroom,
      heldOutput: admitted.output_tokens,
      worstOutput: worst.output_tokens,
      cutReason: "",
    };
    record.counters = headroom.hold.counters;
  }
  let finished = false;
  try {
    record.decision = "allow";
    const charged = await forwardAllowed(ctx, req, res, operation, body, path, query, {
      record,
      view,
      decision,
      pricing,
      capped,
      admitted,
      settings,
      policy,
    });
    if (capped) ctx.leases.finish(capped.hold, charged ?? NO_AMOUNT);
    finished = true;
  } finally {
    // Whatever ended the request without an answer releases its hold.
    if (capped && !finished) ctx.leases.finish(capped.hold, NO_AMOUNT);
  }
}

/** A request under caps: its hold on the leases, and for a stream how far its output is covered. */
interface CappedRequest {
  hold: Hold;
  plans: CounterPlan[];
  heldOutput: number;
  /** The request's own output cap: a stream never needs more held than that. */
  worstOutput: number;
  /** Set when the proxy ended the stream at a cap: the row's deny_reason. */
  cutReason: string;
}

/**
 * Forwards an allowed request and publishes its event; returns what it is charged in counter units
 * (undefined when the upstream was never reached or the credential could not be opened).
 */
async function forwardAllowed(
  ctx: ProxyContext,
  req: IncomingMessage,
  res: ServerResponse,
  operation: Operation,
  body: JsonObject,
  path: string,
  query: string,
  request: {
    record: RequestRecord;
    view: AccountView;
    decision: Extract<ReturnType<typeof decide>, { decision: "allow" }>;
    pricing: Pricing;
    capped: CappedRequest | undefined;
    admitted: AdmittedTokens;
    settings: NonNullable<AccountView["snapshot"]["settings"]>;
    policy: Extract<ReturnType<typeof decide>, { decision: "allow" }>["policy"];
  },
): Promise<Amount | undefined> {
  const { record, view, decision, pricing, capped, admitted, settings, policy } = request;
  const { provider, catalog } = decision;
  const wire = record.wire;
  const plan = capturePlan(settings, policy, view.guardrails);
  const target = upstreamTarget(provider.upstream_url, path, forwardedQuery(wire, query));
  record.host = target.host;
  record.path = target.path;
  const prompt = plan.capture ? promptText(body) : "";

  let apiKey: string;
  try {
    apiKey = apiKeyOf(ctx, view, provider);
  } catch (error) {
    ctx.logger.error({ err: error, provider_id: provider.id }, "provider credential cannot be unsealed");
    sendError(
      res,
      wire,
      502,
      "provider.credential_unavailable",
      "the provider's credential cannot be opened",
    );
    publish(ctx, { ...record, status: 502 });
    return undefined;
  }
  const own: Record<string, string> = {
    ...catalogHeaders(wire, catalog.extra_headers, provider.extra_values, req.headers),
    ...identityHeaders(provider, record.caller),
    // Token counting takes no metadata (the vendor refuses fields it does not know there).
    ...(provider.metadata_disabled || !record.metered
      ? {}
      : injectMetadata(body, catalog.identity_injection.json_metadata, record.caller)),
    "content-type": "application/json",
    [catalog.auth_header_name.toLowerCase()]: renderAuthHeader(catalog.auth_header_template, apiKey),
  };
  // Usage of a streamed chat completion only comes when asked for.
  if (operation === "chat" && body.stream === true) {
    body.stream_options = {
      ...(isJsonObject(body.stream_options) ? body.stream_options : {}),
      include_usage: true,
    };
  }
  if (decision.model !== body.model) body.model = decision.model;

  ctx.admissions.announce(record, admitted, pricing);
  const sentAt = performance.now();
  const result = await forward(
    {
      pool: ctx.pools.get(target.origin, provider.skip_tls_verification),
      method: "POST",
      path: target.pathWithQuery,
      headers: upstreamHeaders(wire, req.headers, own),
      body: JSON.stringify(body),
      wire,
      captureLimit: plan.capture ? 32_768 : 0,
      ...(capped && body.stream === true
        ? { growth: new CappedStreamGrowth(ctx, record.caller.account_id, capped, pricing) }
        : {}),
    },
    res,
  );
  record.series?.forwarded(result, sentAt);
  if (result.outcome === "unreachable") {
    const privateUpstream = privateUpstreamOf(result.error);
    if (privateUpstream) {
      sendError(
        res,
        wire,
        403,
        "provider.private_upstream",
        `the upstream of provider ${provider.name} (${privateUpstream.host}) is a private address, which this gateway does not connect to (AGN_ALLOWED_PRIVATE_UPSTREAMS names the ones it does)`,
      );
      publish(ctx, { ...record, status: 403, denyReason: "provider.private_upstream" });
      return undefined;
    }
    ctx.logger.warn({ err: result.error, provider_id: provider.id }, "upstream unreachable");
    sendError(
      res,
      wire,
      502,
      "provider.unreachable",
      `the upstream provider ${provider.name} did not answer`,
    );
    publish(ctx, { ...record, status: 502 });
    return undefined;
  }
  // A vendor refusing the provider's key becomes an alert; any other answer costs this comparison.
  if (result.status === 401) ctx.credentialRejections.rejected(record.caller.account_id, provider.id, 401);
  const usage =
    result.outcome === "answered"
      ? result.usage
      : interruptedUsage(result.usage, admitted.input_tokens, result.streamedOutputTokens());
  const cost = computeCost(usage, pricing.rates, pricing.shape);
  publish(ctx, {
    ...record,
    status: result.status,
    stream: result.stream || record.stream,
    denyReason: result.outcome === "cut" ? (capped?.cutReason ?? "") : "",
    usage,
    cost,
    ...captureFields(plan, prompt, result.completion),
    responseModel: result.responseModel,
  });
  return { tokens: usage.input_tokens + usage.output_tokens, costNanos: cost.cost_nanos };
}

/**
 * A capped stream's growth: it holds one output step beyond what it streamed, asks for the next
 * step once half of the current one is used (so a refusal cuts the stream within its hold), and
 * stops growing at the request's own output cap.
 */
class CappedStreamGrowth implements StreamGrowth {
  private readonly step: Amount;

  constructor(
    private readonly ctx: ProxyContext,
    private readonly accountId: string,
    private readonly capped: CappedRequest,
    pricing: Pricing,
  ) {
    this.step = holdAmount({ input_tokens: 0, output_tokens: STREAM_OUTPUT_STEP_TOKENS }, pricing);
  }

  extendAt(): number {
    const { heldOutput, worstOutput } = this.capped;
    return heldOutput >= worstOutput ? Number.POSITIVE_INFINITY : heldOutput - STREAM_OUTPUT_STEP_TOKENS / 2;
  }

  async extend(): Promise<boolean> {
    const { capped, step } = this;
    const extended = await this.ctx.leases.extend(this.accountId, capped.hold, capped.plans, step);
    if (extended.kind === "held") {
      capped.heldOutput += STREAM_OUTPUT_STEP_TOKENS;
      return true;
    }
    capped.cutReason =
      extended.kind === "refused"
        ? capDenyReason(extended.plan, extended.used, step)
        : "consumption.unavailable";
    return false;
  }
}

function captureFields(plan: CapturePlan, prompt: string, completion: string) {
  if (!plan.capture) return {};
  return { prompt: captured(prompt, plan), completion: captured(completion, plan) };
}

function denyMessage(reason: string, model: string): string {
  switch (reason) {
    case "llm_policy.no_matching_policy":
      return "no policy lets you use a provider for this request";
    case "guardrail.model_not_allowed":
      return `model ${model} is not allowed for you`;
    case "provider.disabled":
      return "the provider for this request is disabled";
    default:
      return "this provider speaks another API; use its endpoint";
  }
}
