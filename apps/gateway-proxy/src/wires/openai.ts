import type { ApiFlavor } from "@agentnet/contracts";
import { isJsonObject, type JsonObject } from "../domain/json";
import { upstreamTarget } from "../upstream/pools";
import { azureV1Base } from "./azure";
import { SSE, sseEvent } from "./sse";
import { CACHED_INSIDE_INPUT, child, count, type UsageCounts, zeroUsage } from "./usage";
import { vertexOpenAiPath, vertexTarget } from "./vertex";
import {
  type CandidateRequest,
  type Dialect,
  noErrorHeaders,
  type Operation,
  plainRoute,
  type Routes,
  type StreamFormat,
  type StreamSoFar,
  vendorErrorType,
  type Wire,
} from "./wire";

/**
 * OpenAI's wire: Chat Completions, Responses and Embeddings, at OpenAI's paths (/v1/…) and at
 * Azure's (wires/azure.ts). Every flavor but Anthropic's and the Gemini API's serves it: OpenAI,
 * Azure, Mistral, Vertex's and Cloudflare's OpenAI-compatible endpoints, custom.
 */

/** The OpenAI-style path of each operation, whatever path the client used (Azure's). */
const OPENAI_PATHS = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  embeddings: "/v1/embeddings",
} as const;

export const openAiPath = (operation: Operation) =>
  operation === "responses" || operation === "embeddings" ? OPENAI_PATHS[operation] : OPENAI_PATHS.chat;

/**
 * `model` is the candidate's; a streamed chat completion asks for its usage
 * (`stream_options.include_usage`), which OpenAI and Azure only report when asked. Mistral refuses
 * the field (422) and reports usage on its last chunk by itself.
 */
function editOpenAiBody(
  body: JsonObject,
  { route, model, streams }: CandidateRequest,
  asksForUsage: boolean,
) {
  if (asksForUsage && route.operation === "chat" && streams) {
    body.stream_options = {
      ...(isJsonObject(body.stream_options) ? body.stream_options : {}),
      include_usage: true,
    };
  }
  if (body.model !== model) body.model = model;
  return {};
}

/** At upstream_url, whose prefix may end in /v1 (or Azure's `…/openai/v1`: `azureBase`). */
const openAiDialect = (asksForUsage: boolean, base = (upstreamUrl: string) => upstreamUrl): Dialect => ({
  target: (upstreamUrl, { route, query }) =>
    upstreamTarget(base(upstreamUrl), openAiPath(route.operation), query),
  editBody: (body, request) => editOpenAiBody(body, request, asksForUsage),
});

const DIALECTS: Partial<Record<ApiFlavor, Dialect>> = {
  openai: openAiDialect(true),
  azure_openai: openAiDialect(true, azureV1Base),
  mistral: openAiDialect(false),
  cloud_gateway: openAiDialect(true),
  // Vertex serves OpenAI-format requests at …/endpoints/openapi/chat/completions (and `embeddings`).
  vertex: {
    target: (upstreamUrl, { route, query }) =>
      vertexTarget(upstreamUrl, vertexOpenAiPath(openAiPath(route.operation)), query),
    editBody: (body, request) => editOpenAiBody(body, request, true),
  },
};

/**
 * A `usage` object: Chat Completions and Embeddings (`prompt_tokens`,
 * `prompt_tokens_details.cached_tokens`), Responses (`input_tokens`,
 * `input_tokens_details.cached_tokens`). Fields it lacks keep `base`'s values.
 */
export function readOpenAiUsage(usage: unknown, base: UsageCounts = zeroUsage()): UsageCounts {
  if (!isJsonObject(usage)) return base;
  if ("prompt_tokens" in usage) {
    return {
      ...base,
      input_tokens: count(usage.prompt_tokens) ?? base.input_tokens,
      output_tokens: count(usage.completion_tokens) ?? base.output_tokens,
      cached_input_tokens:
        count(child(usage.prompt_tokens_details, "cached_tokens")) ?? base.cached_input_tokens,
    };
  }
  return {
    ...base,
    input_tokens: count(usage.input_tokens) ?? base.input_tokens,
    output_tokens: count(usage.output_tokens) ?? base.output_tokens,
    cached_input_tokens:
      count(child(usage.input_tokens_details, "cached_tokens")) ?? base.cached_input_tokens,
  };
}

/** Responses events whose object an ending needs. */
const RESPONSE_STARTED = /"response\.(?:created|in_progress)"/;

/**
 * Ends a stream as at its output limit: Responses `response.incomplete` with reason
 * `max_output_tokens`; chat a chunk with `finish_reason: "length"`, then `[DONE]`.
 */
function openAiEnding({ usage, outputTokens, firstEvent, response }: StreamSoFar): string {
  if (response) {
    const incomplete = {
      ...response,
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      usage: {
        input_tokens: usage.input_tokens,
        output_tokens: outputTokens,
        total_tokens: usage.input_tokens + outputTokens,
      },
    };
    return sseEvent({ type: "response.incomplete", response: incomplete }, "response.incomplete");
  }
  const meta = {
    id: firstEvent.id ?? "",
    object: "chat.completion.chunk",
    created: firstEvent.created ?? 0,
    model: firstEvent.model ?? "",
  };
  return `${sseEvent({ ...meta, choices: [{ index: 0, delta: {}, finish_reason: "length" }] })}data: [DONE]\n\n`;
}

const stream: StreamFormat = {
  framing: SSE,
  mentionsUsage: (data) => data.includes('"usage"'),
  usage(event, base) {
    if (event.type === "response.completed") return readOpenAiUsage(child(event.response, "usage"), base);
    if (isJsonObject(event.usage)) return readOpenAiUsage(event.usage, base);
    return undefined;
  },
  // Only delta events generate output; a finished answer (response.completed) repeats it whole.
  generates: (data) => data.includes("delta"),
  firstEventMarker: '"choices"',
  // A chat stream's first chunk is all its ending needs (kept as the first event).
  structural: (data, sawFirstEvent) =>
    !sawFirstEvent && data.includes('"response.') && RESPONSE_STARTED.test(data),
  track(event, structure) {
    if (event.type !== "response.created" && event.type !== "response.in_progress") return;
    const response = child(event, "response");
    if (isJsonObject(response)) structure.response = response;
  },
  ending: openAiEnding,
  // What OpenAI streams on a failure mid-stream; its SDK raises an APIError on an event with `error`.
  broken: (message) => sseEvent({ error: { message, type: "server_error", param: null, code: null } }),
};

export const openai: Wire = {
  name: "openai",
  keyInQuery: false,
  // `openai-beta`: opt-in API previews, as the SDK sends them.
  forwardedHeaders: new Set(["accept", "user-agent", "openai-beta"]),
  forwardedQuery: new Set(),
  dialect: (flavor) => DIALECTS[flavor],
  streamsAsEvents: () => true,
  answerUsage: (body) => (isJsonObject(body) ? readOpenAiUsage(body.usage) : zeroUsage()),
  stream,
  ...CACHED_INSIDE_INPUT,
  overloadedStatus: 503,
  errorHeaders: noErrorHeaders,
  errorBody: (status, reason, text) => ({
    error: { message: text, type: vendorErrorType(status), code: reason, param: null },
  }),
  modelList: (models, created) => ({
    object: "list",
    data: models.map((m) => ({ id: m.id, object: "model", created, owned_by: m.owner })),
  }),
};

/** /v1/chat/completions, /v1/responses, /v1/embeddings. */
export const openAiRoutes: Routes = {
  exact: {
    "/v1/chat/completions": plainRoute("openai", openai, "chat", "/v1/chat/completions"),
    "/v1/responses": plainRoute("openai", openai, "responses", "/v1/responses"),
    "/v1/embeddings": plainRoute("openai", openai, "embeddings", "/v1/embeddings"),
  },
  match: () => undefined,
};
