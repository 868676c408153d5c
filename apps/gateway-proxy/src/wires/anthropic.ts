import { jsonOrUndefined } from "@agentnet/bus";
import type { ApiFlavor } from "@agentnet/contracts";
import { isJsonObject, type JsonObject } from "../domain/json";
import { upstreamTarget } from "../upstream/pools";
import { BEDROCK_ANTHROPIC_VERSION, bedrockTarget, INVOKE_CHUNKS, invokeMethod } from "./bedrock-runtime";
import type { Restream } from "./restream";
import { SSE, sseEvent } from "./sse";
import { CACHED_BESIDE_INPUT, child, count, type UsageCounts, zeroUsage } from "./usage";
import { VERTEX_ANTHROPIC_VERSION, vertexModelPath, vertexTarget } from "./vertex";
import {
  type Dialect,
  noErrorHeaders,
  plainRoute,
  type Routes,
  type StreamFormat,
  type StreamSoFar,
  vendorErrorType,
  type Wire,
} from "./wire";

/**
 * Anthropic's Messages API (/v1/messages, /v1/messages/count_tokens), served by Anthropic and by
 * Vertex (Claude on Vertex: rawPredict); Vertex's own paths for it are in wires/vertex.ts.
 */

/** The Messages API version sent to Anthropic for a request that came as Vertex's (which names its own). */
const ANTHROPIC_VERSION = "2023-06-01";

const DIALECTS: Partial<Record<ApiFlavor, Dialect>> = {
  /**
   * `model` is the candidate's; a Vertex-style body's `anthropic_version` goes into the
   * `anthropic-version` header instead. The betas go as `anthropic-beta`.
   */
  anthropic: {
    target: (upstreamUrl, { route, query }) =>
      upstreamTarget(
        upstreamUrl,
        route.operation === "count_tokens" ? "/v1/messages/count_tokens" : "/v1/messages",
        query,
      ),
    editBody(body, { model, betas }) {
      const headers: Record<string, string> = {};
      if (betas) headers["anthropic-beta"] = betas;
      if (body.model !== model) body.model = model;
      if ("anthropic_version" in body) {
        const version = body.anthropic_version;
        delete body.anthropic_version;
        headers["anthropic-version"] =
          typeof version === "string" && !version.startsWith("vertex-") ? version : ANTHROPIC_VERSION;
      }
      return headers;
    },
  },
  /**
   * …/publishers/anthropic/models/{model}:rawPredict (`streamRawPredict` for a stream, and the
   * `count-tokens` model for token counting). No `model` in the body (the path names it; token
   * counting keeps it), and `anthropic_version` is Vertex's unless the caller named one. The betas
   * go as `anthropic-beta` (Vertex refuses one it does not know: only the accepted ones come here).
   */
  vertex: {
    target(upstreamUrl, { route, model, streams }) {
      const counting = route.operation === "count_tokens";
      const method = !counting && streams ? "streamRawPredict" : "rawPredict";
      return vertexTarget(
        upstreamUrl,
        vertexModelPath("anthropic", counting ? "count-tokens" : model, method),
        "",
      );
    },
    editBody(body, { route, model, betas }) {
      if (route.operation === "count_tokens") body.model = model;
      else delete body.model;
      if (typeof body.anthropic_version !== "string") body.anthropic_version = VERTEX_ANTHROPIC_VERSION;
      const headers: Record<string, string> = {};
      if (betas) headers["anthropic-beta"] = betas;
      return headers;
    },
  },
  /**
   * /model/{model}/invoke (`invoke-with-response-stream` for a stream, `count-tokens` for token
   * counting, which takes the request base64 in `input.invokeModel.body`): no `model` or `stream`
   * in the body, Bedrock's `anthropic_version`, the betas in the body's `anthropic_beta`, where
   * Bedrock takes them (not as the header). Bedrock's stream becomes Anthropic's events.
   */
  bedrock: {
    target: (upstreamUrl, request) => bedrockTarget(upstreamUrl, request.model, invokeMethod(request)),
    editBody(body, { route, betas }) {
      delete body.model;
      delete body.stream;
      body.anthropic_version = BEDROCK_ANTHROPIC_VERSION;
      if (betas) body.anthropic_beta = betas.split(",");
      if (route.operation === "count_tokens") {
        const request = Buffer.from(JSON.stringify(body)).toString("base64");
        for (const key of Object.keys(body)) delete body[key];
        body.input = { invokeModel: { body: request } };
      }
      return {};
    },
    restream: (route) => (route.operation === "count_tokens" ? TOKEN_COUNT_AS_ANTHROPIC : SSE_OF_CHUNKS),
  },
};

/** Bedrock's chunks, each Claude's event as Anthropic streams it. */
const SSE_OF_CHUNKS: Restream = {
  from: INVOKE_CHUNKS,
  contentType: "text/event-stream; charset=utf-8",
  frame(data) {
    const type = child(jsonOrUndefined(data), "type");
    return `${typeof type === "string" ? `event: ${type}\n` : ""}data: ${data}\n\n`;
  },
};

/** Bedrock's token count (`{"inputTokens"}`) as Anthropic's (`{"input_tokens"}`). */
const TOKEN_COUNT_AS_ANTHROPIC: Restream = {
  ...SSE_OF_CHUNKS,
  json: (answer) => (isJsonObject(answer) ? { input_tokens: answer.inputTokens } : answer),
};

/**
 * Anthropic's `usage`: input_tokens are the uncached ones; cache reads
 * (`cache_read_input_tokens`) and writes (`cache_creation_input_tokens`) are beside them. Fields it
 * lacks keep `base`'s values (a stream splits usage over message_start and message_delta).
 */
export function readAnthropicUsage(usage: unknown, base: UsageCounts = zeroUsage()): UsageCounts {
  if (!isJsonObject(usage)) return base;
  // `cache_creation` splits the writes by cache lifetime; `cache_creation_input_tokens` is their sum.
  const fiveMinutes = count(child(usage.cache_creation, "ephemeral_5m_input_tokens"));
  const oneHour = count(child(usage.cache_creation, "ephemeral_1h_input_tokens"));
  const split =
    fiveMinutes === undefined && oneHour === undefined ? undefined : (fiveMinutes ?? 0) + (oneHour ?? 0);
  return {
    input_tokens: count(usage.input_tokens) ?? base.input_tokens,
    output_tokens: count(usage.output_tokens) ?? base.output_tokens,
    cached_input_tokens: count(usage.cache_read_input_tokens) ?? base.cached_input_tokens,
    cache_creation_tokens: count(usage.cache_creation_input_tokens) ?? split ?? base.cache_creation_tokens,
    cache_creation_1h_tokens: oneHour ?? base.cache_creation_1h_tokens,
  };
}

/**
 * The events that end a stream as at its output limit: `content_block_stop` (if a block is open),
 * `message_delta` with `stop_reason: "max_tokens"`, `message_stop`. Bedrock's invoke stream
 * carries the same events in its own framing.
 */
export function anthropicEndingEvents({ openBlock, outputTokens }: StreamSoFar): JsonObject[] {
  return [
    ...(openBlock === undefined ? [] : [{ type: "content_block_stop", index: openBlock }]),
    {
      type: "message_delta",
      delta: { stop_reason: "max_tokens", stop_sequence: null },
      usage: { output_tokens: outputTokens },
    },
    { type: "message_stop" },
  ];
}

/**
 * Anthropic's stream events (message_start, content_block_delta, message_delta, …): the usage is
 * split over message_start and message_delta, and deltas generate.
 */
export const anthropicEvents: Omit<StreamFormat, "framing" | "ending" | "broken"> = {
  mentionsUsage: (data) => data.includes('"usage"'),
  usage(event, base) {
    if (event.type === "message_start") return readAnthropicUsage(child(event.message, "usage"), base);
    if (event.type === "message_delta") return readAnthropicUsage(event.usage, base);
    return undefined;
  },
  generates: (data) => data.includes("delta"),
  firstEventMarker: undefined,
  structural: (data) => data.includes("content_block_st"),
  track(event, structure) {
    if (event.type === "content_block_start" && typeof event.index === "number")
      structure.openBlock = event.index;
    else if (event.type === "content_block_stop") structure.openBlock = undefined;
  },
};

const stream: StreamFormat = {
  framing: SSE,
  ...anthropicEvents,
  ending: (soFar) =>
    anthropicEndingEvents(soFar)
      .map((event) => sseEvent(event, String(event.type)))
      .join(""),
  // The `error` event Anthropic streams on a failure mid-stream; its SDK raises an APIError on it.
  broken: (message) => sseEvent({ type: "error", error: { type: "api_error", message } }, "error"),
};

/**
 * The status Anthropic answers when overloaded, which its SDKs retry after `retry-after`: 529
 * (`overloaded_error`).
 */
const OVERLOADED = 529;

export const anthropic: Wire = {
  name: "anthropic",
  keyInQuery: false,
  // `anthropic-version` (required) and `anthropic-beta` (features such as Claude Code's
  // `claude-code-20250219`), and the `beta` query parameter Claude Code puts on /v1/messages.
  forwardedHeaders: new Set(["accept", "user-agent", "anthropic-version", "anthropic-beta"]),
  forwardedQuery: new Set(["beta"]),
  dialect: (flavor) => DIALECTS[flavor],
  streamsAsEvents: () => true,
  answerUsage: (body) => (isJsonObject(body) ? readAnthropicUsage(body.usage) : zeroUsage()),
  stream,
  ...CACHED_BESIDE_INPUT,
  overloadedStatus: OVERLOADED,
  errorHeaders: noErrorHeaders,
  errorBody: (status, _reason, text) => ({
    type: "error",
    error: { type: vendorErrorType(status), message: text },
  }),
  modelList(models, created) {
    const createdAt = new Date(created * 1000).toISOString();
    return {
      data: models.map((m) => ({ type: "model", id: m.id, display_name: m.label, created_at: createdAt })),
      has_more: false,
      first_id: models[0]?.id ?? null,
      last_id: models[models.length - 1]?.id ?? null,
    };
  },
};

/** /v1/messages, /v1/messages/count_tokens. */
export const anthropicRoutes: Routes = {
  exact: {
    "/v1/messages": plainRoute("anthropic", anthropic, "messages", "/v1/messages"),
    "/v1/messages/count_tokens": plainRoute(
      "anthropic",
      anthropic,
      "count_tokens",
      "/v1/messages/count_tokens",
    ),
  },
  match: () => undefined,
};

/** A path the proxy does not serve that an Anthropic client sent: its 404 is in Anthropic's shape. */
export const anthropicClientSent = (path: string, anthropicVersion: boolean) =>
  path.startsWith("/v1/messages") || anthropicVersion || path.includes("/publishers/anthropic/");
