import type { ApiFlavor } from "@agentnet/contracts";
import { isJsonObject, type JsonObject } from "../domain/json";
import { upstreamTarget } from "../upstream/pools";
import { anthropicEndingEvents, anthropicEvents, readAnthropicUsage } from "./anthropic";
import {
  type BedrockMethod,
  bedrockTarget,
  INVOKE_CHUNKS,
  invokeChunk,
  invokeMethod,
} from "./bedrock-runtime";
import { eventMessage, eventStreamFraming, exceptionMessage } from "./event-stream";
import type { Restream } from "./restream";
import { SSE } from "./sse";
import { CACHED_BESIDE_INPUT, child, count, type UsageCounts, zeroUsage } from "./usage";
import {
  type AnswerHeaders,
  type Dialect,
  decodedSegment,
  type ListedModel,
  type Listing,
  type Operation,
  type Routes,
  type StreamFormat,
  type StreamSoFar,
  trackNothing,
  type Wire,
} from "./wire";

/**
 * Amazon Bedrock's runtime API: InvokeModel (/model/{modelId}/invoke, and
 * /invoke-with-response-stream), whose bodies are the model vendor's own (Claude's: Anthropic's
 * Messages API without `model`, with `anthropic_version: "bedrock-2023-05-31"`), Converse
 * (/model/{modelId}/converse, /converse-stream), Bedrock's own format for every model, and
 * CountTokens (/model/{modelId}/count-tokens). The path names the model (a foundation model id
 * such as `anthropic.claude-sonnet-4-5-20250929-v1:0`, or an inference profile such as `us.…`);
 * streams come in AWS's event stream (wires/event-stream.ts).
 */

const METHODS = {
  invoke: { streams: false, converse: false, operation: "messages" },
  "invoke-with-response-stream": { streams: true, converse: false, operation: "messages" },
  converse: { streams: false, converse: true, operation: "chat" },
  "converse-stream": { streams: true, converse: true, operation: "chat" },
  "count-tokens": { streams: false, converse: false, operation: "count_tokens" },
} as const satisfies Record<BedrockMethod, { streams: boolean; converse: boolean; operation: Operation }>;

const isMethod = (method: string): method is BedrockMethod => Object.hasOwn(METHODS, method);

/** The Messages API version sent to Anthropic for a request that came as Bedrock's (which names its own). */
const ANTHROPIC_VERSION = "2023-06-01";

/** The Claude request CountTokens wraps (`{"input": {"invokeModel": {"body": <base64>}}}`), or undefined. */
function countedClaudeBody(body: JsonObject): JsonObject | undefined {
  const wrapped = child(child(body.input, "invokeModel"), "body");
  if (typeof wrapped !== "string") return undefined;
  try {
    const inner: unknown = JSON.parse(Buffer.from(wrapped, "base64").toString("utf8"));
    return isJsonObject(inner) ? inner : undefined;
  } catch {
    return undefined;
  }
}

/** The betas of a Claude body's `anthropic_beta` that the provider accepts (all of them when it names no list). */
function acceptedBodyBetas(body: JsonObject, accepted: readonly string[] | undefined): string[] {
  const betas = Array.isArray(body.anthropic_beta) ? body.anthropic_beta : [];
  return betas.filter(
    (beta): beta is string => typeof beta === "string" && (accepted === undefined || accepted.includes(beta)),
  );
}

const INVOKE_DIALECTS: Partial<Record<ApiFlavor, Dialect>> = {
  /**
   * The body passes as the caller sent it (Bedrock takes no model in it: the path names it), but
   * for the `anthropic_beta` values the provider does not accept: Bedrock refuses a request naming
   * a beta it does not know.
   */
  bedrock: {
    target: (upstreamUrl, request) => bedrockTarget(upstreamUrl, request.model, invokeMethod(request)),
    editBody(body, { acceptedBetas }) {
      if (acceptedBetas === undefined || !Array.isArray(body.anthropic_beta)) return {};
      const kept = acceptedBodyBetas(body, acceptedBetas);
      if (kept.length === 0) delete body.anthropic_beta;
      else if (kept.length !== body.anthropic_beta.length) body.anthropic_beta = kept;
      return {};
    },
  },
  /**
   * Claude at Anthropic: /v1/messages (/v1/messages/count_tokens, the Claude request CountTokens
   * wraps), `model` the candidate's, `stream` as the path says, Bedrock's `anthropic_version` and
   * `anthropic_beta` as Anthropic's headers. Anthropic's stream becomes chunks of Bedrock's.
   */
  anthropic: {
    target: (upstreamUrl, { route }) =>
      upstreamTarget(
        upstreamUrl,
        route.operation === "count_tokens" ? "/v1/messages/count_tokens" : "/v1/messages",
        "",
      ),
    editBody(body, { route, model, streams, acceptedBetas }) {
      if (route.operation === "count_tokens") {
        const counted = countedClaudeBody(body);
        if (counted) {
          for (const key of Object.keys(body)) delete body[key];
          Object.assign(body, counted);
        }
      }
      const headers: Record<string, string> = { "anthropic-version": ANTHROPIC_VERSION };
      const betas = acceptedBodyBetas(body, acceptedBetas);
      if (betas.length > 0) headers["anthropic-beta"] = betas.join(",");
      delete body.anthropic_beta;
      delete body.anthropic_version;
      body.model = model;
      if (streams) body.stream = true;
      return headers;
    },
    restream: (route) => (route.operation === "count_tokens" ? TOKEN_COUNT_AS_BEDROCK : CHUNKS_OF_SSE),
  },
};

/** Anthropic's stream events, each as a chunk of Bedrock's stream. */
const CHUNKS_OF_SSE: Restream = {
  from: SSE,
  contentType: "application/vnd.amazon.eventstream",
  frame: invokeChunk,
};

/** Anthropic's token count (`{"input_tokens"}`) as Bedrock's (`{"inputTokens"}`). */
const TOKEN_COUNT_AS_BEDROCK: Restream = {
  ...CHUNKS_OF_SSE,
  json: (answer) => (isJsonObject(answer) ? { inputTokens: answer.input_tokens } : answer),
};

const CONVERSE_DIALECTS: Partial<Record<ApiFlavor, Dialect>> = {
  /**
   * The body passes as the caller sent it, but for Claude's betas (`anthropic_beta` in
   * `additionalModelRequestFields`) the provider does not accept, as for InvokeModel.
   */
  bedrock: {
    target: (upstreamUrl, { model, streams }) =>
      bedrockTarget(upstreamUrl, model, streams ? "converse-stream" : "converse"),
    editBody(body, { acceptedBetas }) {
      const fields = body.additionalModelRequestFields;
      if (acceptedBetas === undefined || !isJsonObject(fields) || !Array.isArray(fields.anthropic_beta))
        return {};
      const kept = acceptedBodyBetas(fields, acceptedBetas);
      if (kept.length === fields.anthropic_beta.length) return {};
      // A new object: the edits replace top-level members, never change the caller's in place.
      const { anthropic_beta: _refused, ...others } = fields;
      body.additionalModelRequestFields = kept.length === 0 ? others : { ...others, anthropic_beta: kept };
      return {};
    },
  },
};

/**
 * Converse's `usage`: `inputTokens` are the uncached ones; cache reads (`cacheReadInputTokens`)
 * and writes (`cacheWriteInputTokens`) are beside them, as Anthropic's are.
 */
export function readConverseUsage(usage: unknown, base: UsageCounts = zeroUsage()): UsageCounts {
  if (!isJsonObject(usage)) return base;
  return {
    ...base,
    input_tokens: count(usage.inputTokens) ?? base.input_tokens,
    output_tokens: count(usage.outputTokens) ?? base.output_tokens,
    cached_input_tokens: count(usage.cacheReadInputTokens) ?? base.cached_input_tokens,
    cache_creation_tokens: count(usage.cacheWriteInputTokens) ?? base.cache_creation_tokens,
  };
}

/**
 * Bedrock's own counts of an invocation, whatever the model (its `amazon-bedrock-invocationMetrics`
 * or its `x-amzn-bedrock-*-token-count` headers): input tokens are the uncached ones, cache reads
 * and writes beside them.
 */
function bedrockCounts(
  counts: { input: unknown; output: unknown; cacheRead: unknown; cacheWrite: unknown },
  base: UsageCounts,
): UsageCounts | undefined {
  const input = count(counts.input);
  if (input === undefined) return undefined;
  return {
    ...base,
    input_tokens: input,
    output_tokens: count(counts.output) ?? base.output_tokens,
    cached_input_tokens: count(counts.cacheRead) ?? base.cached_input_tokens,
    cache_creation_tokens: count(counts.cacheWrite) ?? base.cache_creation_tokens,
  };
}

const INVOCATION_METRICS = "amazon-bedrock-invocationMetrics";

/** The invocation metrics in the last chunk of an invoke stream. */
function invocationMetrics(event: JsonObject, base: UsageCounts): UsageCounts | undefined {
  const metrics = event[INVOCATION_METRICS];
  if (!isJsonObject(metrics)) return undefined;
  return bedrockCounts(
    {
      input: metrics.inputTokenCount,
      output: metrics.outputTokenCount,
      cacheRead: metrics.cacheReadInputTokenCount,
      cacheWrite: metrics.cacheWriteInputTokenCount,
    },
    base,
  );
}

/** A header's value as a count (a number in text). */
function headerCount(headers: AnswerHeaders, name: string): number | undefined {
  const value = headers[name];
  return typeof value === "string" && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** InvokeModel's usage: Bedrock's token-count headers (any model), else Claude's `usage` in the body. */
function invokeUsage(body: unknown, headers: AnswerHeaders): UsageCounts {
  const claude = readAnthropicUsage(isJsonObject(body) ? body.usage : undefined);
  const counted = bedrockCounts(
    {
      input: headerCount(headers, "x-amzn-bedrock-input-token-count"),
      output: headerCount(headers, "x-amzn-bedrock-output-token-count"),
      cacheRead: headerCount(headers, "x-amzn-bedrock-cache-read-input-token-count"),
      cacheWrite: headerCount(headers, "x-amzn-bedrock-cache-write-input-token-count"),
    },
    claude,
  );
  return counted ?? claude;
}

/**
 * How Bedrock ends a stream that failed once begun: an exception message, which its SDKs raise
 * (InvokeModelWithResponseStream and ConverseStream both list `internalServerException`).
 */
const brokenStream = (message: string) => exceptionMessage("internalServerException", message);

/**
 * InvokeModelWithResponseStream: the model's events, each in a chunk (`INVOKE_CHUNKS`), Claude's
 * for the requests this wire sends; the last one carries Bedrock's invocation metrics, which are
 * read over Claude's usage (and are the only usage of other models' streams).
 */
const invokeStream: StreamFormat = {
  framing: INVOKE_CHUNKS,
  ...anthropicEvents,
  mentionsUsage: (data) => data.includes('"usage"') || data.includes(INVOCATION_METRICS),
  usage: (event, base) => invocationMetrics(event, base) ?? anthropicEvents.usage(event, base),
  ending: (soFar) =>
    Buffer.concat(anthropicEndingEvents(soFar).map((event) => invokeChunk(JSON.stringify(event)))),
  broken: brokenStream,
};

/**
 * ConverseStream: events named by their `:event-type` (messageStart, contentBlockStart,
 * contentBlockDelta, contentBlockStop, messageStop, metadata); the watcher reads each as
 * `{"<event type>": <payload>}`. The usage is in `metadata`, after messageStop.
 */
const converseStream: StreamFormat = {
  framing: eventStreamFraming((eventType, payload) => `{"${eventType}":${payload}}`),
  mentionsUsage: (data) => data.includes('"metadata"'),
  usage: (event, base) =>
    isJsonObject(event.metadata) ? readConverseUsage(event.metadata.usage, base) : undefined,
  generates: (data) => data.startsWith('{"contentBlockDelta"'),
  firstEventMarker: undefined,
  structural: () => false,
  track: trackNothing,
  ending: converseEnding,
  broken: brokenStream,
};

/** A ConverseStream stopped at its output limit: `messageStop` with `stopReason: "max_tokens"`, then `metadata`. */
function converseEnding({ usage, outputTokens }: StreamSoFar): Uint8Array {
  const counts = {
    inputTokens: usage.input_tokens,
    outputTokens,
    totalTokens: usage.input_tokens + usage.cached_input_tokens + usage.cache_creation_tokens + outputTokens,
    ...(usage.cached_input_tokens > 0 ? { cacheReadInputTokens: usage.cached_input_tokens } : {}),
    ...(usage.cache_creation_tokens > 0 ? { cacheWriteInputTokens: usage.cache_creation_tokens } : {}),
  };
  return Buffer.concat([
    eventMessage("messageStop", { stopReason: "max_tokens" }),
    eventMessage("metadata", { usage: counts, metrics: { latencyMs: 0 } }),
  ]);
}

/** Bedrock's error type (the `x-amzn-ErrorType` header), by status, as its SDKs raise them. */
export function bedrockErrorType(status: number): string {
  if (status === 400 || status === 413) return "ValidationException";
  if (status === 401 || status === 403) return "AccessDeniedException";
  if (status === 404 || status === 405) return "ResourceNotFoundException";
  if (status === 408 || status === 504) return "ModelTimeoutException";
  if (status === 424) return "ModelErrorException";
  if (status === 429) return "ThrottlingException";
  if (status === 502 || status === 503 || status === 529) return "ServiceUnavailableException";
  return "InternalServerException";
}

/** What both Bedrock wires share: the caller's headers Bedrock takes, its errors, no listing of its own. */
const BEDROCK = {
  name: "aws.bedrock",
  keyInQuery: false,
  // Bedrock's request headers: the answer's type, tracing, guardrails, latency and service tiers.
  forwardedHeaders: new Set([
    "accept",
    "user-agent",
    "x-amzn-bedrock-accept",
    "x-amzn-bedrock-trace",
    "x-amzn-bedrock-guardrailidentifier",
    "x-amzn-bedrock-guardrailversion",
    "x-amzn-bedrock-performanceconfig-latency",
    "x-amzn-bedrock-service-tier",
  ]),
  forwardedQuery: new Set<string>(),
  streamsAsEvents: () => true,
  ...CACHED_BESIDE_INPUT,
  overloadedStatus: 503,
  errorBody: (_status: number, _reason: string, text: string) => ({ message: text }),
  errorHeaders: (status: number) => ({ "x-amzn-errortype": bedrockErrorType(status) }),
  /** ListFoundationModels' shape (Bedrock's control plane lists models, its runtime does not). */
  modelList: (models: readonly ListedModel[]) => ({
    modelSummaries: models.map((m) => ({ modelId: m.id, modelName: m.label, providerName: m.owner })),
  }),
} as const;

/** InvokeModel with Claude's body (Anthropic's Messages API as Bedrock takes it), and CountTokens. */
export const bedrockInvoke: Wire = {
  ...BEDROCK,
  dialect: (flavor) => INVOKE_DIALECTS[flavor],
  answerUsage: invokeUsage,
  stream: invokeStream,
};

/** Converse and ConverseStream, Bedrock's own format. */
export const bedrockConverse: Wire = {
  ...BEDROCK,
  dialect: (flavor) => CONVERSE_DIALECTS[flavor],
  answerUsage: (body) => (isJsonObject(body) ? readConverseUsage(body.usage) : zeroUsage()),
  stream: converseStream,
};

const BEDROCK_ROUTE = /^\/model\/([^/]+)\/([a-z-]+)$/;

/** /model/{modelId}/invoke, /invoke-with-response-stream, /converse, /converse-stream, /count-tokens. */
export const bedrockRoutes: Routes = {
  exact: {},
  match(path) {
    const matched = BEDROCK_ROUTE.exec(path);
    if (!matched) return undefined;
    const [, model = "", method = ""] = matched;
    if (!isMethod(method)) return undefined;
    const { streams, converse, operation } = METHODS[method];
    return {
      ingress: "bedrock",
      wire: converse ? bedrockConverse : bedrockInvoke,
      operation,
      label: `/model/{modelId}/${method}`,
      pathModel: decodedSegment(model),
      streams,
    };
  },
};

/** A path the proxy does not serve that a Bedrock client sent: its 404 is in Bedrock's shape. */
export const bedrockClientSent = (path: string) => path.startsWith("/model/");

/**
 * An inference profile's id: a geography (`us.`, `eu.`, `apac.`, `global.`, …) before a foundation
 * model's id (`anthropic.claude-…`), which the profile routes to.
 */
const INFERENCE_PROFILE = /^([a-z]{2,6})\.([a-z0-9-]+\.[^/]+)$/;

/**
 * ARNs name a region and an account; a gateway's listing has neither of its own, so its ARNs name
 * `us-east-1` and no account. Claude Code reads the foundation model from a profile's `models`.
 */
const ARN_PREFIX = "arn:aws:bedrock:us-east-1:";

/** GetInferenceProfile's answer for a granted profile. */
function inferenceProfile(model: ListedModel) {
  const foundation = INFERENCE_PROFILE.exec(model.id)?.[2] ?? model.id;
  return {
    inferenceProfileId: model.id,
    inferenceProfileName: model.label,
    inferenceProfileArn: `${ARN_PREFIX}:inference-profile/${model.id}`,
    description: `${model.label} through ${model.owner}`,
    models: [{ modelArn: `${ARN_PREFIX}:foundation-model/${foundation}` }],
    status: "ACTIVE",
    type: "SYSTEM_DEFINED",
  };
}

const isProfile = (model: ListedModel) => INFERENCE_PROFILE.test(model.id);

const PROFILE_PATH = /^\/inference-profiles\/([^/]+)$/;

/**
 * Bedrock's control plane as Claude Code in Bedrock mode reads it at its base URL:
 * GET /foundation-models (ListFoundationModels), /inference-profiles (ListInferenceProfiles: the
 * granted models that are inference profiles) and /inference-profiles/{id} (GetInferenceProfile).
 */
export function bedrockListing(path: string): Listing | undefined {
  if (path === "/foundation-models") {
    return { wire: bedrockInvoke, label: path, answer: bedrockInvoke.modelList };
  }
  if (path === "/inference-profiles") {
    return {
      wire: bedrockInvoke,
      label: path,
      answer: (models) => ({ inferenceProfileSummaries: models.filter(isProfile).map(inferenceProfile) }),
    };
  }
  const profile = PROFILE_PATH.exec(path);
  if (!profile) return undefined;
  const id = decodedSegment(profile[1] ?? "");
  return {
    wire: bedrockInvoke,
    label: "/inference-profiles/{inferenceProfileIdentifier}",
    answer: (models) => {
      const model = models.find((listed) => listed.id === id && isProfile(listed));
      return model ? inferenceProfile(model) : undefined;
    },
  };
}
