import type { ProxyContext } from "../context";
import { isJsonObject, type JsonObject } from "../domain/json";
import { requestShapeProblem } from "../domain/request-shape";
import { sessionIdFrom } from "../domain/session";
import { accountView, authenticate } from "../http/auth";
import { type Body, BodyNotUtf8, BodyTooLarge, readBody, sourceIp } from "../http/body";
import { sendError } from "../http/errors";
import { requestId } from "../http/request-id";
import { isMetered } from "../wires";
import type { InferenceRequest, Received } from "./stages";

/**
 * Who asks (the token's caller), what for (a JSON body naming a model), for which account (its
 * view and settings). Undefined after answering a refusal: before its account is known and
 * configured, a request has no row, so it ends in no event.
 */
export async function receive(ctx: ProxyContext, request: InferenceRequest): Promise<Received | undefined> {
  const { req, res, wire, route } = request;
  const caller = await authenticate(ctx, req, res, wire, request.query);
  if (!caller) return undefined;
  const read = await readJsonBody(ctx, request);
  if (!read) return undefined;
  const { body } = read;
  const model = route.pathModel ?? body.model;
  if (typeof model !== "string" || model === "")
    return refuseUnrecorded(request, 400, "request.model_missing", "the request body must name a model");
  const streamed = route.streams || body.stream === true;
  const shapeProblem = requestShapeProblem(body);
  if (shapeProblem) return refuseUnrecorded(request, 400, "request.invalid", shapeProblem);
  const view = await accountView(ctx, res, wire, caller.account_id);
  if (!view) return undefined;
  const settings = view.snapshot.settings;
  if (!settings)
    return refuseUnrecorded(
      request,
      403,
      "gateway.not_configured",
      "this account has no agent network configured",
    );
  ctx.served.record(settings.endpoint, Date.now());
  return {
    request,
    id: requestId(),
    startedAt: Date.now(),
    caller,
    logged: settings.enable_log_collection,
    sourceIp: sourceIp(req, ctx.options.trustProxy),
    body,
    bodyText: read.text,
    bodyBytes: read.bytes,
    model,
    stream: streamed,
    sse: streamed && wire.streamsAsEvents(request.query),
    metered: isMetered(request.operation),
    sessionId: sessionIdFrom(req.headers, body),
    view,
    settings,
  };
}

/** The body as a JSON object, with its text, or undefined after answering why it is not one. */
async function readJsonBody(
  ctx: ProxyContext,
  request: InferenceRequest,
): Promise<{ body: JsonObject; text: string; bytes: Buffer } | undefined> {
  let raw: Body;
  try {
    raw = await readBody(request.req, ctx.options.bodyLimitBytes);
  } catch (error) {
    if (error instanceof BodyTooLarge)
      return refuseUnrecorded(request, 413, "request.too_large", "request body too large");
    if (error instanceof BodyNotUtf8)
      return refuseUnrecorded(request, 400, "request.invalid_utf8", "the request body is not valid UTF-8");
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.text);
  } catch {
    body = undefined;
  }
  if (isJsonObject(body)) return { body, text: raw.text, bytes: raw.bytes };
  return refuseUnrecorded(request, 400, "request.invalid_json", "the request body must be a JSON object");
}

/** Answers a refusal that leaves no row (the account is not known yet, or not configured). */
function refuseUnrecorded(
  request: InferenceRequest,
  status: number,
  reason: string,
  message: string,
): undefined {
  sendError(request.res, request.wire, status, reason, message);
  return undefined;
}
