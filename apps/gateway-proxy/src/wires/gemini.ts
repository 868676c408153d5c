import type { ApiFlavor } from "@agentnet/contracts";
import { isJsonObject, type JsonObject } from "../domain/json";
import { upstreamTarget } from "../upstream/pools";
import { SSE, sseEvent } from "./sse";
import { CACHED_INSIDE_INPUT, child, count, type UsageCounts, zeroUsage } from "./usage";
import { GEMINI_OPERATIONS, vertexModelPath, vertexTarget } from "./vertex";
import {
  type CandidateRequest,
  type Dialect,
  decodedSegment,
  noErrorHeaders,
  pathSegment,
  type Routes,
  type StreamFormat,
  type StreamSoFar,
  trackNothing,
  type Wire,
} from "./wire";

/**
 * The Gemini API's generateContent (/v1beta/models/{model}:generateContent|streamGenerateContent|
 * countTokens, and the same under /v1/), served by the Gemini API and by Vertex (publishers/google);
 * Vertex's own paths for it are in wires/vertex.ts. The path names the model; the body passes as
 * it is.
 */

const method = ({ route, streams }: CandidateRequest) =>
  route.operation === "count_tokens" ? "countTokens" : streams ? "streamGenerateContent" : "generateContent";

const DIALECTS: Partial<Record<ApiFlavor, Dialect>> = {
  /** /v1beta/models/{model}:{method} (the client's version when it came by the Gemini API's paths). */
  gemini: {
    target(upstreamUrl, request) {
      const { route, model, query } = request;
      const version = route.ingress === "gemini" && route.label.startsWith("/v1/") ? "v1" : "v1beta";
      return upstreamTarget(
        upstreamUrl.replace(/\/(v1|v1beta)\/*$/, ""),
        `/${version}/models/${pathSegment(model)}:${method(request)}`,
        query,
      );
    },
    editBody: () => ({}),
  },
  /** …/publishers/google/models/{model}:{method}. */
  vertex: {
    target: (upstreamUrl, request) =>
      vertexTarget(upstreamUrl, vertexModelPath("google", request.model, method(request)), request.query),
    editBody: () => ({}),
  },
};

/**
 * Gemini's `usageMetadata`, in the OpenAI shape: the prompt (`promptTokenCount`, which holds the
 * cached `cachedContentTokenCount`) and the tool-use prompt (`toolUsePromptTokenCount`, the results
 * of tools the model ran) are input; the answer (`candidatesTokenCount`) and the thinking
 * (`thoughtsTokenCount`, billed as output) are output. A stream repeats the counts so far on each
 * chunk: the latest replaces what came before, a count it lacks keeps its earlier value.
 */
export function readGeminiUsage(usage: unknown, base: UsageCounts = zeroUsage()): UsageCounts {
  if (!isJsonObject(usage)) return base;
  const prompt = count(usage.promptTokenCount);
  const toolUse = count(usage.toolUsePromptTokenCount);
  const candidates = count(usage.candidatesTokenCount);
  const thoughts = count(usage.thoughtsTokenCount);
  const input = prompt === undefined && toolUse === undefined ? undefined : (prompt ?? 0) + (toolUse ?? 0);
  const output =
    candidates === undefined && thoughts === undefined ? undefined : (candidates ?? 0) + (thoughts ?? 0);
  return {
    ...base,
    input_tokens: input ?? base.input_tokens,
    output_tokens: output ?? base.output_tokens,
    cached_input_tokens: count(usage.cachedContentTokenCount) ?? base.cached_input_tokens,
  };
}

/**
 * The usage of a whole answer: its `usageMetadata`, or in a stream sent as one JSON array (no
 * `alt=sse`) that of its last chunk that has one.
 */
function answerUsage(body: unknown): UsageCounts {
  const chunks = Array.isArray(body) ? body : [body];
  for (let index = chunks.length - 1; index >= 0; index--) {
    const usage = child(chunks[index], "usageMetadata");
    if (isJsonObject(usage)) return readGeminiUsage(usage);
  }
  return zeroUsage();
}

/**
 * Gemini's last chunk of an answer stopped at its output limit: an empty text part with
 * `finishReason: "MAX_TOKENS"`, and the usage so far.
 */
function geminiEnding({ usage, outputTokens, firstEvent }: StreamSoFar): string {
  const prompt = usage.input_tokens;
  const chunk: JsonObject = {
    candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason: "MAX_TOKENS", index: 0 }],
    usageMetadata: {
      promptTokenCount: prompt,
      candidatesTokenCount: outputTokens,
      totalTokenCount: prompt + outputTokens,
      ...(usage.cached_input_tokens > 0 ? { cachedContentTokenCount: usage.cached_input_tokens } : {}),
    },
    ...(firstEvent.modelVersion === undefined ? {} : { modelVersion: firstEvent.modelVersion }),
    ...(firstEvent.responseId === undefined ? {} : { responseId: firstEvent.responseId }),
  };
  return sseEvent(chunk);
}

const stream: StreamFormat = {
  framing: SSE,
  mentionsUsage: (data) => data.includes('"usageMetadata"'),
  usage: (event, base) =>
    isJsonObject(event.usageMetadata) ? readGeminiUsage(event.usageMetadata, base) : undefined,
  // Each chunk is a delta: its candidates' parts are the new text.
  generates: (data) => data.includes('"candidates"'),
  firstEventMarker: '"candidates"',
  // The first chunk is all an ending needs (kept as the first event).
  structural: () => false,
  track: trackNothing,
  ending: geminiEnding,
  // Google's error body as a chunk: its SDK raises a ServerError on a chunk with `error`.
  broken: (message) => sseEvent({ error: { code: 500, message, status: "INTERNAL" } }),
};

/** Google's canonical error status of an HTTP status, as the Gemini API and Vertex answer it. */
function googleStatus(status: number): string {
  if (status === 400 || status === 413) return "INVALID_ARGUMENT";
  if (status === 401) return "UNAUTHENTICATED";
  if (status === 403) return "PERMISSION_DENIED";
  if (status === 404 || status === 405) return "NOT_FOUND";
  if (status === 429) return "RESOURCE_EXHAUSTED";
  if (status === 499) return "CANCELLED";
  if (status === 503 || status === 502 || status === 529) return "UNAVAILABLE";
  if (status === 504) return "DEADLINE_EXCEEDED";
  return "INTERNAL";
}

export const gemini: Wire = {
  name: "gemini",
  // Google's clients send the key as `key=` (the caller's agentnet token: never forwarded).
  keyInQuery: true,
  forwardedHeaders: new Set(["accept", "user-agent"]),
  // `alt=sse`: a stream as server-sent events rather than one JSON array.
  forwardedQuery: new Set(["alt"]),
  dialect: (flavor) => DIALECTS[flavor],
  streamsAsEvents: (query) => query !== "" && new URLSearchParams(query).get("alt") === "sse",
  answerUsage,
  stream,
  ...CACHED_INSIDE_INPUT,
  overloadedStatus: 503,
  errorHeaders: noErrorHeaders,
  errorBody: (status, _reason, text) => ({
    error: { code: status, message: text, status: googleStatus(status) },
  }),
  modelList: (models) => ({
    models: models.map((m) => ({
      name: `models/${m.id}`,
      displayName: m.label,
      supportedGenerationMethods: ["generateContent", "countTokens"],
    })),
  }),
};

const GEMINI = /^\/(v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/** /v1beta/models/{model}:{method}, and the same under /v1/. */
export const geminiRoutes: Routes = {
  exact: {},
  match(path) {
    const matched = GEMINI.exec(path);
    if (!matched) return undefined;
    const [, version = "", model = "", method = ""] = matched;
    const operation = GEMINI_OPERATIONS[method];
    if (!operation) return undefined;
    return {
      ingress: "gemini",
      wire: gemini,
      operation,
      label: `/${version}/models/{model}:${method}`,
      pathModel: decodedSegment(model),
      streams: method === "streamGenerateContent",
    };
  },
};

/** A path the proxy does not serve that a Gemini client sent: its 404 is in Google's shape. */
export const geminiClientSent = (path: string) =>
  path.startsWith("/v1beta/") || path.includes("/publishers/google/") || path.includes(":generateContent");
