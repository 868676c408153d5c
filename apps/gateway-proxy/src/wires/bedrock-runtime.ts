import { jsonOrUndefined } from "@agentnet/bus";
import { upstreamTarget } from "../upstream/pools";
import { eventMessage, eventStreamFraming } from "./event-stream";
import { child } from "./usage";
import { type CandidateRequest, pathSegment } from "./wire";

/**
 * Where a request goes at an Amazon Bedrock provider, and how Claude's events travel in Bedrock's
 * stream: what the wires that reach Bedrock share (its own in wires/bedrock.ts, Anthropic's
 * Messages API in wires/anthropic.ts).
 */

/** The Messages API version Bedrock takes in the body of Claude requests. */
export const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";

export type BedrockMethod =
  | "invoke"
  | "invoke-with-response-stream"
  | "converse"
  | "converse-stream"
  | "count-tokens";

/** InvokeModel's method for the request: token counting, a stream, or a whole answer. */
export function invokeMethod({ route, streams }: CandidateRequest): BedrockMethod {
  if (route.operation === "count_tokens") return "count-tokens";
  return streams ? "invoke-with-response-stream" : "invoke";
}

/** /model/{modelId}/{method} at the provider's upstream_url, the model id as one path segment (`:` as %3A). */
export const bedrockTarget = (upstreamUrl: string, model: string, method: BedrockMethod) =>
  upstreamTarget(upstreamUrl, `/model/${pathSegment(model)}/${method}`, "");

/**
 * InvokeModelWithResponseStream's framing: each `chunk` event carries one of the model vendor's
 * stream events, base64 in `bytes` (for Claude: message_start … message_stop, the last one with
 * Bedrock's `amazon-bedrock-invocationMetrics`); the watcher reads that event.
 */
export const INVOKE_CHUNKS = eventStreamFraming((eventType, payload) => {
  if (eventType !== "chunk") return undefined;
  const bytes = child(jsonOrUndefined(payload), "bytes");
  return typeof bytes === "string" ? Buffer.from(bytes, "base64").toString("utf8") : undefined;
});

/** One of the model vendor's stream events (its JSON text) as an InvokeModelWithResponseStream chunk. */
export const invokeChunk = (event: string): Uint8Array =>
  eventMessage("chunk", { bytes: Buffer.from(event).toString("base64") });
