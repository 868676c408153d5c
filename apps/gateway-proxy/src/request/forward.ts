import { type GatewayProvider, renderAuthHeader } from "@agentnet/contracts";
import { apiKeyOf, type ProxyContext } from "../context";
import { MAX_CAPTURE_CHARS } from "../domain/capture";
import { catalogHeaders, forwardedQuery, upstreamHeaders } from "../domain/forwarding";
import { identityHeaders, injectMetadata } from "../domain/identity";
import { isJsonObject } from "../domain/json";
import { type ForwardRequest, forward as relay } from "../upstream/forward";
import { privateUpstreamOf, upstreamTarget } from "../upstream/pools";
import { CappedStreamGrowth } from "./capped-stream";
import type { Admitted, Answered, Candidate, Failed } from "./stages";

type UpstreamTarget = ReturnType<typeof upstreamTarget>;

/**
 * Sends an admitted request to its candidate and relays the answer: the provider's credential, the
 * request as the vendor takes it, the upstream call. Failed when no answer came, and nothing has
 * reached the client then.
 */
export async function forward(ctx: ProxyContext, admitted: Admitted): Promise<Answered | Failed> {
  const { request, record, view } = admitted.received;
  const { candidate } = admitted;
  const { provider } = candidate;
  const target = upstreamTarget(
    provider.upstream_url,
    request.path,
    forwardedQuery(request.wire, request.query),
  );
  record.host = target.host;
  record.path = target.path;
  let apiKey: string;
  try {
    apiKey = apiKeyOf(ctx, view, provider);
  } catch (error) {
    ctx.logger.error({ err: error, provider_id: provider.id }, "provider credential cannot be unsealed");
    return failed(502, "provider.credential_unavailable", "the provider's credential cannot be opened", "");
  }
  const upstream = upstreamRequest(ctx, admitted, candidate, target, apiKey);
  ctx.admissions.announce(record, admitted.tokens, candidate.pricing);
  const sentAt = performance.now();
  const result = await relay(upstream, request.res);
  record.series?.forwarded(result, sentAt);
  if (result.outcome === "unreachable") return unreachable(ctx, provider, result.error);
  // A vendor refusing the provider's key becomes an alert; any other answer costs this comparison.
  if (result.status === 401) ctx.credentialRejections.rejected(record.caller.account_id, provider.id, 401);
  return result;
}

/**
 * The request as the candidate's vendor takes it: the caller's headers its wire forwards, then the
 * catalog's, the identity and the credential; the body with the vendor's metadata and model.
 */
function upstreamRequest(
  ctx: ProxyContext,
  admitted: Admitted,
  candidate: Candidate,
  target: UpstreamTarget,
  apiKey: string,
): ForwardRequest {
  const { request, record, body } = admitted.received;
  const { provider, catalog } = candidate;
  const { wire } = request;
  const own: Record<string, string> = {
    ...catalogHeaders(wire, catalog.extra_headers, provider.extra_values, request.req.headers),
    ...identityHeaders(provider, record.caller),
    // Token counting takes no metadata (the vendor refuses fields it does not know there).
    ...(provider.metadata_disabled || !record.metered
      ? {}
      : injectMetadata(body, catalog.identity_injection.json_metadata, record.caller)),
    "content-type": "application/json",
    [catalog.auth_header_name.toLowerCase()]: renderAuthHeader(catalog.auth_header_template, apiKey),
  };
  // Usage of a streamed chat completion only comes when asked for.
  if (request.operation === "chat" && body.stream === true) {
    body.stream_options = {
      ...(isJsonObject(body.stream_options) ? body.stream_options : {}),
      include_usage: true,
    };
  }
  if (candidate.model !== body.model) body.model = candidate.model;
  const { capped } = admitted;
  return {
    pool: ctx.pools.get(target.origin, provider.skip_tls_verification),
    method: "POST",
    path: target.pathWithQuery,
    headers: upstreamHeaders(wire, request.req.headers, own),
    body: JSON.stringify(body),
    wire,
    captureLimit: admitted.capture.capture ? MAX_CAPTURE_CHARS : 0,
    growth:
      capped && body.stream === true
        ? new CappedStreamGrowth(ctx, record.caller.account_id, capped, candidate.pricing)
        : undefined,
  };
}

/** An upstream that could not be reached: refused by this gateway (a private address), or away. */
function unreachable(ctx: ProxyContext, provider: GatewayProvider, error: unknown): Failed {
  const privateUpstream = privateUpstreamOf(error);
  if (privateUpstream) {
    return failed(
      403,
      "provider.private_upstream",
      `the upstream of provider ${provider.name} (${privateUpstream.host}) is a private address, which this gateway does not connect to (AGN_ALLOWED_PRIVATE_UPSTREAMS names the ones it does)`,
      "provider.private_upstream",
    );
  }
  ctx.logger.warn({ err: error, provider_id: provider.id }, "upstream unreachable");
  return failed(502, "provider.unreachable", `the upstream provider ${provider.name} did not answer`, "");
}

const failed = (status: number, reason: string, message: string, denyReason: string): Failed => ({
  outcome: "failed",
  status,
  reason,
  message,
  denyReason,
});
