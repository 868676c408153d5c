import { MAX_RATE_PER_1K } from "@agentnet/contracts";
import type { ProxyContext } from "../context";
import { capturePlan } from "../domain/capture";
import type { Decision } from "../domain/decision";
import {
  admissionTokens,
  estimateTokens,
  holdAmount,
  outputCeiling,
  promptText,
  rateAboveMaximum,
  ratesFor,
  streamOutputLimit,
} from "../domain/estimate";
import { checkHost } from "../domain/host";
import { identifierProblem } from "../domain/request-shape";
import { capsInForce, type Headroom, holdHeadroom } from "../http/caps";
import type { Admitted, Candidate, CappedRequest, Received, Refused, Routed } from "./stages";

/**
 * Whether the request may go, where, and within which caps: its identifiers, the endpoint it came
 * to, the policy decision (provider and model), the model's prices, and a hold on this proxy's
 * leases when a limit applies. Every refusal here is a deny row.
 */
export async function admit(ctx: ProxyContext, received: Received): Promise<Admitted | Refused> {
  const { request, body, view } = received;
  // Refused with a row, like every request of a configured account: the row holds them cut.
  const identifier = identifierProblem(received.model, received.sessionId);
  if (identifier) return refused(400, "request.invalid", identifier);
  const host = checkHost(received.settings.endpoint, request.req.headers.host);
  if (!host.ok) return refused(403, host.reason, "this token's account is served at another endpoint");

  const decision = route(received);
  const routed: Routed = {
    provider: decision.provider,
    policyId: decision.policy?.id ?? "",
    model: decision.model,
  };
  if (decision.decision === "deny") {
    const status = decision.reason === "gateway.flavor_mismatch" ? 400 : 403;
    return routedRefusal(
      routed,
      refused(status, decision.reason, denyMessage(decision.reason, decision.model)),
    );
  }
  const caps = received.metered ? capsInForce(received.caller, view, decision.policy, Date.now()) : undefined;
  const candidates: Candidate[] = [];
  let pricingRefusal: Refused | undefined;
  for (const route of ctx.routing.order(decision)) {
    const pricing = ratesFor(route.provider, route.catalog, route.model, request.wire);
    const candidate: Candidate = { ...route, pricing };
    const problem = pricingProblem(candidate, caps?.usdCap ?? false);
    if (problem) pricingRefusal ??= problem;
    else candidates.push(candidate);
  }
  const [candidate] = candidates;
  if (!candidate) {
    return routedRefusal(
      routed,
      pricingRefusal ?? refused(500, "gateway.internal", "no candidate for the request"),
    );
  }
  const { catalog, policy, model } = candidate;

  const capture = capturePlan(received.settings, policy, view.guardrails);
  const prompt = capture.capture ? promptText(body) : "";
  const ceiling = outputCeiling(catalog, model);
  const worst = estimateTokens(body, request.operation, ceiling, received.bodyText);
  const tokens = admissionTokens(worst, received.sse);
  // The hold comes last: once taken, it is handleInference's to settle whatever happens.
  let capped: CappedRequest | undefined;
  if (caps && caps.checks.length > 0) {
    const amount = holdAmount(tokens, candidate.pricing);
    const headroom = await holdHeadroom(ctx, received.caller.account_id, caps, amount);
    if (headroom.kind !== "held") return routedRefusal(routed, capRefusal(headroom));
    const { hold, plans } = headroom;
    capped = {
      hold,
      plans,
      heldOutput: tokens.output_tokens,
      worstOutput: received.sse ? streamOutputLimit(body, ceiling) : worst.output_tokens,
      cutReason: "",
    };
  }
  return {
    outcome: "admitted",
    received,
    candidate,
    candidates,
    routing: decision.routing,
    tokens,
    capped,
    capture,
    prompt,
  };
}

/** The policy decision for the request: the provider, policy and model, or why none. */
function route(received: Received): Decision {
  return received.view.decisions.of(received.request.wire, received.model, received.caller.group_ids);
}

/** A refusal after the policy decision: its row names where the decision sent the request. */
const routedRefusal = (routed: Routed, refusal: Refused): Refused => ({ ...refusal, routed });

function refused(status: number, reason: string, message: string, headers?: Record<string, string>): Refused {
  return { outcome: "refused", status, reason, message, headers };
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

/** A candidate the request cannot go to for its prices: above the maximum, or unknown under a USD cap. */
function pricingProblem(candidate: Candidate, usdCapped: boolean): Refused | undefined {
  const overpriced = rateAboveMaximum(candidate.pricing.rates);
  if (overpriced) return rateOutOfRange(candidate, overpriced);
  if (usdCapped && !candidate.pricing.rates.pricing_known) return unpriced(candidate);
  return undefined;
}

const rateOutOfRange = (candidate: Candidate, rate: string): Refused =>
  refused(
    403,
    "pricing.rate_out_of_range",
    `model ${candidate.model} on provider ${candidate.provider.name} is priced above ${MAX_RATE_PER_1K} USD per 1000 tokens (${rate}); an admin must set its rates again`,
  );

const unpriced = (candidate: Candidate): Refused =>
  refused(
    403,
    "pricing.unknown_model",
    `model ${candidate.model} has no price on provider ${candidate.provider.name}, and a USD limit applies to you; an admin must set its rates (input_per_1k, output_per_1k) on the provider`,
  );

function capRefusal(headroom: Exclude<Headroom, { kind: "held" }>): Refused {
  if (headroom.kind === "unavailable")
    return refused(503, "consumption.unavailable", "usage limits cannot be checked right now; try again");
  return refused(429, headroom.reason, "usage cap reached for this window", {
    "retry-after": String(headroom.retryAfter),
  });
}
