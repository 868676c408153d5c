import { isJsonObject, type JsonObject } from "../domain/json";
import type { Wire } from "../domain/wire";

/**
 * Token counts in the spec's names. OpenAI shape: cached_input_tokens is a subset of
 * input_tokens. Anthropic shape: input_tokens are the uncached ones, and cache reads
 * (cached_input_tokens) and writes (cache_creation_tokens) are additive.
 */
export interface UsageCounts {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_creation_tokens: number;
  /** Of cache_creation_tokens, those written to Anthropic's 1-hour cache (billed at its own rate). */
  cache_creation_1h_tokens: number;
}

export const zeroUsage = (): UsageCounts => ({
  input_tokens: 0,
  output_tokens: 0,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  cache_creation_1h_tokens: 0,
});

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;

const child = (value: unknown, key: string): unknown => (isJsonObject(value) ? value[key] : undefined);

/** Total tokens as the access log reports them: every token the upstream processed. */
export const totalTokens = (usage: UsageCounts, wire: Wire): number =>
  wire === "anthropic"
    ? usage.input_tokens + usage.cached_input_tokens + usage.cache_creation_tokens + usage.output_tokens
    : usage.input_tokens + usage.output_tokens;

/**
 * The model the vendor says answered: the `model` of a Chat Completions, Embeddings or Responses
 * object or chunk, Anthropic's `message.model` (its stream's message_start), a Responses event's
 * `response.model` or Gemini's `modelVersion`. Traces report it (`gen_ai.response.model`).
 */
export function answeringModel(body: JsonObject): string | undefined {
  const model =
    body.model ?? child(body.message, "model") ?? child(body.response, "model") ?? body.modelVersion;
  return typeof model === "string" && model !== "" ? model : undefined;
}

/**
 * Reads a vendor `usage` object: Chat Completions and Embeddings (`prompt_tokens`,
 * `prompt_tokens_details.cached_tokens`), Responses (`input_tokens`,
 * `input_tokens_details.cached_tokens`), Anthropic (`cache_read_input_tokens`,
 * `cache_creation_input_tokens`). Fields it lacks keep `base`'s values (Anthropic streams
 * split usage over message_start and message_delta).
 */
export function readUsage(usage: unknown, wire: Wire, base: UsageCounts = zeroUsage()): UsageCounts {
  if (!isJsonObject(usage)) return base;
  if (wire === "gemini") return readGeminiUsage(usage, base);
  if (wire === "anthropic") {
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
  if ("prompt_tokens" in usage) {
    return {
      input_tokens: count(usage.prompt_tokens) ?? base.input_tokens,
      output_tokens: count(usage.completion_tokens) ?? base.output_tokens,
      cached_input_tokens:
        count(child(usage.prompt_tokens_details, "cached_tokens")) ?? base.cached_input_tokens,
      cache_creation_tokens: base.cache_creation_tokens,
      cache_creation_1h_tokens: base.cache_creation_1h_tokens,
    };
  }
  return {
    input_tokens: count(usage.input_tokens) ?? base.input_tokens,
    output_tokens: count(usage.output_tokens) ?? base.output_tokens,
    cached_input_tokens:
      count(child(usage.input_tokens_details, "cached_tokens")) ?? base.cached_input_tokens,
    cache_creation_tokens: base.cache_creation_tokens,
    cache_creation_1h_tokens: base.cache_creation_1h_tokens,
  };
}

/**
 * Gemini's `usageMetadata`, in the OpenAI shape: the prompt (`promptTokenCount`, which holds the
 * cached `cachedContentTokenCount`) and the tool-use prompt (`toolUsePromptTokenCount`, the results
 * of tools the model ran) are input; the answer (`candidatesTokenCount`) and the thinking
 * (`thoughtsTokenCount`, billed as output) are output. A stream repeats the counts so far on each
 * chunk: the latest replaces what came before, a count it lacks keeps its earlier value.
 */
function readGeminiUsage(usage: JsonObject, base: UsageCounts): UsageCounts {
  const prompt = count(usage.promptTokenCount);
  const toolUse = count(usage.toolUsePromptTokenCount);
  const candidates = count(usage.candidatesTokenCount);
  const thoughts = count(usage.thoughtsTokenCount);
  const input = prompt === undefined && toolUse === undefined ? undefined : (prompt ?? 0) + (toolUse ?? 0);
  const output =
    candidates === undefined && thoughts === undefined ? undefined : (candidates ?? 0) + (thoughts ?? 0);
  return {
    input_tokens: input ?? base.input_tokens,
    output_tokens: output ?? base.output_tokens,
    cached_input_tokens: count(usage.cachedContentTokenCount) ?? base.cached_input_tokens,
    cache_creation_tokens: base.cache_creation_tokens,
    cache_creation_1h_tokens: base.cache_creation_1h_tokens,
  };
}

/** Gemini's answer text: the text parts of its first candidate. */
const geminiText = (body: JsonObject): string => {
  const [candidate] = Array.isArray(body.candidates) ? body.candidates : [];
  return textsOf(child(child(candidate, "content"), "parts"), (part) => part.text).join("");
};

const textsOf = (items: unknown, pick: (item: JsonObject) => unknown): string[] =>
  Array.isArray(items)
    ? items.flatMap((item) => {
        const text = isJsonObject(item) ? pick(item) : undefined;
        return typeof text === "string" ? [text] : [];
      })
    : [];

/** The answer text of a non-streaming response, for prompt capture. */
export function completionText(body: unknown): string {
  if (!isJsonObject(body)) return "";
  if (Array.isArray(body.choices)) {
    return textsOf(body.choices, (choice) => child(choice.message, "content")).join("");
  }
  if (Array.isArray(body.content)) return textsOf(body.content, (block) => block.text).join("");
  if (Array.isArray(body.candidates)) return geminiText(body);
  if (Array.isArray(body.output)) {
    return body.output.flatMap((item) => textsOf(child(item, "content"), (part) => part.text)).join("");
  }
  return "";
}

/** Text a streaming event adds to the answer (chat delta, Responses delta, Anthropic text delta). */
export function streamedText(event: JsonObject): string {
  if (Array.isArray(event.candidates)) return geminiText(event);
  if (Array.isArray(event.choices)) {
    return textsOf(event.choices, (choice) => child(choice.delta, "content")).join("");
  }
  if (event.type === "response.output_text.delta" && typeof event.delta === "string") return event.delta;
  if (event.type === "content_block_delta") {
    const text = child(event.delta, "text");
    return typeof text === "string" ? text : "";
  }
  return "";
}

/** The usage an SSE event carries, merged onto what earlier events said. */
export function streamedUsage(event: JsonObject, wire: Wire, base: UsageCounts): UsageCounts | undefined {
  if (wire === "gemini") {
    return isJsonObject(event.usageMetadata) ? readUsage(event.usageMetadata, wire, base) : undefined;
  }
  if (wire === "anthropic") {
    if (event.type === "message_start") return readUsage(child(event.message, "usage"), wire, base);
    if (event.type === "message_delta") return readUsage(event.usage, wire, base);
    return undefined;
  }
  if (event.type === "response.completed") return readUsage(child(event.response, "usage"), wire, base);
  if (isJsonObject(event.usage)) return readUsage(event.usage, wire, base);
  return undefined;
}
