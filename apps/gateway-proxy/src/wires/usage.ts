import { isJsonObject, type JsonObject } from "../domain/json";

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

/**
 * How a wire's usage counts cached input, and what follows for its cost and totals: inside the
 * input (OpenAI's, Gemini's) or beside it, with cache writes (Anthropic's).
 */
export const CACHED_INSIDE_INPUT = {
  costShape: "openai",
  totalTokens: (usage: UsageCounts) => usage.input_tokens + usage.output_tokens,
  uncachedInput: (usage: UsageCounts) => Math.max(0, usage.input_tokens - usage.cached_input_tokens),
} as const;
export const CACHED_BESIDE_INPUT = {
  costShape: "anthropic",
  totalTokens: (usage: UsageCounts) =>
    usage.input_tokens + usage.cached_input_tokens + usage.cache_creation_tokens + usage.output_tokens,
  uncachedInput: (usage: UsageCounts) => usage.input_tokens,
} as const;

export const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;

export const child = (value: unknown, key: string): unknown => (isJsonObject(value) ? value[key] : undefined);

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
  // Converse: `output.message.content`.
  if (isJsonObject(body.output)) {
    return textsOf(child(child(body.output, "message"), "content"), (block) => block.text).join("");
  }
  if (Array.isArray(body.output)) {
    return body.output.flatMap((item) => textsOf(child(item, "content"), (part) => part.text)).join("");
  }
  return "";
}

/** Text a streaming event adds to the answer (chat delta, Responses delta, Anthropic and Converse text deltas). */
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
  // ConverseStream, as its watcher reads it: `{"contentBlockDelta": {"delta": {"text"}}}`.
  if (isJsonObject(event.contentBlockDelta)) {
    const text = child(event.contentBlockDelta.delta, "text");
    return typeof text === "string" ? text : "";
  }
  return "";
}
