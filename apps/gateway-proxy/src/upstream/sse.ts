import { isJsonObject, type JsonObject } from "../domain/json";
import type { Wire } from "../domain/wire";
import { answeringModel, streamedText, streamedUsage, type UsageCounts, zeroUsage } from "./usage";

/** Longest line kept while waiting for its end: an SSE line beyond it is not one we read. */
const MAX_PENDING_CHARS = 1024 * 1024;

/**
 * Characters of streamed output per token when estimating how much a stream generated before its
 * usage arrives: three, below the usual four of English, so code and JSON are not undercounted.
 */
const OUTPUT_CHARS_PER_TOKEN = 3;

/**
 * The string fields a delta event generates into: chat `content`, `refusal`, `reasoning_content`
 * and tool-call `arguments`; Responses' `delta`; Anthropic's `text`, `partial_json`, `thinking`.
 * Matched in the raw line: JSON-parsing every event of a capped stream cost ~10 % of the proxy's
 * throughput on short streams, and an estimate needs no exact string decoding (an escape counts
 * as two characters).
 */
const GENERATED_TEXT =
  /"(?:content|refusal|reasoning_content|arguments|delta|text|partial_json|thinking)":"((?:[^"\\]|\\.)*)"/g;

function deltaChars(data: string): number {
  let chars = 0;
  for (const match of data.matchAll(GENERATED_TEXT)) chars += match[1]?.length ?? 0;
  return chars;
}

/**
 * Delta events kept unscanned, in characters, before they are counted anyway: counting waits until
 * an answer is needed (`reached`, `outputTokens`), so a short capped stream never scans its deltas.
 */
const MAX_UNSCANNED_CHARS = 64 * 1024;

/** Responses events whose object an ending needs (chat needs its first chunk, Anthropic its open block). */
const RESPONSE_STARTED = /"response\.(?:created|in_progress)"/;

const child = (value: unknown, key: string): unknown => (isJsonObject(value) ? value[key] : undefined);

/**
 * Watches an SSE response go by and keeps its usage and, when capturing, its text. Only `data:`
 * lines that can matter are JSON-parsed: the ones that mention usage, or all of them while
 * capturing or tracking output (a capped stream, which grows its hold as output arrives and may
 * be ended here in the vendor's own format: `ending()`).
 */
export class SseWatcher {
  usage: UsageCounts = zeroUsage();
  sawUsage = false;
  /** The model the vendor names in the events that carry usage (`answeringModel`). */
  model: string | undefined;
  /** Data events seen: about one token each, what an interrupted stream is charged for its output. */
  events = 0;
  private text = "";
  private pending = "";
  /** Generated characters of the delta events scanned so far. */
  private outputChars = 0;
  /** Delta events not scanned yet, and the whole length of every delta event: a bound on outputChars. */
  private unscanned: string[] = [];
  private unscannedChars = 0;
  private deltaEventChars = 0;
  /**
   * What an ending needs: the first chat chunk (its id, model and created; kept as it came, parsed
   * only by an ending), Anthropic's open block, the Responses object.
   */
  private chatChunk: string | undefined;
  private openBlock: number | undefined;
  private response: JsonObject | undefined;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly wire: Wire,
    private readonly captureLimit: number,
    private readonly trackOutput = false,
  ) {}

  push(chunk: Uint8Array): void {
    this.pushText(this.decoder.decode(chunk, { stream: true }));
  }

  /** Decoded text; for relays that cut at event boundaries and decode themselves. */
  pushText(text: string): void {
    this.pending += text;
    let newline = this.pending.indexOf("\n");
    while (newline !== -1) {
      this.line(this.pending.slice(0, newline));
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf("\n");
    }
    if (this.pending.length > MAX_PENDING_CHARS) this.pending = "";
  }

  end(): void {
    this.pending += this.decoder.decode();
    if (this.pending !== "") this.line(this.pending);
    this.pending = "";
  }

  completion(): string {
    return this.text;
  }

  /** Output tokens generated so far: the vendor's count once it said one, else an estimate from the deltas. */
  outputTokens(): number {
    this.scan();
    return Math.max(this.usage.output_tokens, Math.ceil(this.outputChars / OUTPUT_CHARS_PER_TOKEN));
  }

  /**
   * Whether `outputTokens()` reached `tokens`. A delta event's whole length bounds the text it
   * generated, so below that bound the answer is no without scanning anything.
   */
  reached(tokens: number): boolean {
    const bound = Math.max(
      this.usage.output_tokens,
      Math.ceil(this.deltaEventChars / OUTPUT_CHARS_PER_TOKEN),
    );
    return bound >= tokens && this.outputTokens() >= tokens;
  }

  /**
   * Whether `outputTokens()` could reach `tokens` once `moreBytes` more bytes of events came: each
   * byte is at most one token, so below that the events can be taken as one batch.
   */
  mayReach(tokens: number, moreBytes: number): boolean {
    const bound = Math.max(
      this.usage.output_tokens,
      Math.ceil(this.deltaEventChars / OUTPUT_CHARS_PER_TOKEN),
    );
    return bound + moreBytes >= tokens;
  }

  private scan(): void {
    for (const data of this.unscanned) this.outputChars += deltaChars(data);
    this.unscanned = [];
    this.unscannedChars = 0;
  }

  /**
   * The events that end this stream as if the model had reached its output limit, in the vendor's
   * format: chat `finish_reason: "length"` then `[DONE]`; Responses `response.incomplete` with
   * reason `max_output_tokens`; Gemini a chunk with `finishReason: "MAX_TOKENS"`; Anthropic `content_block_stop` (if a block is open), `message_delta`
   * with `stop_reason: "max_tokens"`, `message_stop`.
   */
  ending(): string {
    const data = (event: unknown, name?: string) =>
      `${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(event)}\n\n`;
    const output = this.outputTokens();
    if (this.wire === "anthropic") {
      const stopBlock =
        this.openBlock === undefined
          ? ""
          : data({ type: "content_block_stop", index: this.openBlock }, "content_block_stop");
      return (
        stopBlock +
        data(
          {
            type: "message_delta",
            delta: { stop_reason: "max_tokens", stop_sequence: null },
            usage: { output_tokens: output },
          },
          "message_delta",
        ) +
        data({ type: "message_stop" }, "message_stop")
      );
    }
    if (this.response) {
      const response = {
        ...this.response,
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        usage: {
          input_tokens: this.usage.input_tokens,
          output_tokens: output,
          total_tokens: this.usage.input_tokens + output,
        },
      };
      return data({ type: "response.incomplete", response }, "response.incomplete");
    }
    if (this.wire === "gemini") return data(this.geminiEnding(output));
    const chunk = this.parsedChatChunk();
    const meta = {
      id: chunk.id ?? "",
      object: "chat.completion.chunk",
      created: chunk.created ?? 0,
      model: chunk.model ?? "",
    };
    return `${data({ ...meta, choices: [{ index: 0, delta: {}, finish_reason: "length" }] })}data: [DONE]\n\n`;
  }

  private line(raw: string): void {
    if (!raw.startsWith("data:")) return;
    const data = raw.slice(5).trim();
    if (data === "" || data === "[DONE]") return;
    this.events++;
    if (this.trackOutput) this.keep(data);
    const capturing = this.text.length < this.captureLimit;
    const structural = this.trackOutput && this.isStructural(data);
    if (!capturing && !structural && !data.includes(this.wire === "gemini" ? '"usageMetadata"' : '"usage"'))
      return;
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (!isJsonObject(event)) return;
    const usage = streamedUsage(event, this.wire, this.usage);
    if (usage) {
      this.usage = usage;
      this.sawUsage = true;
      this.model ??= answeringModel(event);
    }
    if (capturing) this.text += streamedText(event);
    if (this.trackOutput) this.track(event);
  }

  /** What a capped stream keeps of an event without parsing it: delta text to count, the first chat chunk. */
  private keep(data: string): void {
    // Only delta events generate output; a finished answer (response.completed) repeats it whole.
    // Each Gemini chunk is a delta (its candidates' parts are the new text).
    if (this.wire === "gemini" ? data.includes('"candidates"') : data.includes("delta")) {
      this.unscanned.push(data);
      this.unscannedChars += data.length;
      this.deltaEventChars += data.length;
      if (this.unscannedChars > MAX_UNSCANNED_CHARS) this.scan();
    }
    if (this.chatChunk === undefined && this.wire !== "anthropic") {
      if (data.includes(this.wire === "gemini" ? '"candidates"' : '"choices"')) this.chatChunk = data;
    }
  }

  /** Whether an ending needs this event: cheap string tests first, a stream has many deltas. */
  private isStructural(data: string): boolean {
    if (this.wire === "anthropic") return data.includes("content_block_st");
    // Gemini's first chunk is all its ending needs (kept by `keep`).
    if (this.wire === "gemini") return false;
    // A chat stream's first chunk is all its ending needs (kept by `keep`): nothing is structural.
    if (this.chatChunk !== undefined) return false;
    return data.includes('"response.') && RESPONSE_STARTED.test(data);
  }

  /**
   * Gemini's last chunk of an answer stopped at its output limit: an empty text part with
   * `finishReason: "MAX_TOKENS"`, and the usage so far.
   */
  private geminiEnding(output: number): JsonObject {
    const first = this.parsedChatChunk();
    const prompt = this.usage.input_tokens;
    return {
      candidates: [
        { content: { role: "model", parts: [{ text: "" }] }, finishReason: "MAX_TOKENS", index: 0 },
      ],
      usageMetadata: {
        promptTokenCount: prompt,
        candidatesTokenCount: output,
        totalTokenCount: prompt + output,
        ...(this.usage.cached_input_tokens > 0
          ? { cachedContentTokenCount: this.usage.cached_input_tokens }
          : {}),
      },
      ...(first.modelVersion === undefined ? {} : { modelVersion: first.modelVersion }),
      ...(first.responseId === undefined ? {} : { responseId: first.responseId }),
    };
  }

  private parsedChatChunk(): JsonObject {
    try {
      const chunk: unknown = JSON.parse(this.chatChunk ?? "{}");
      return isJsonObject(chunk) ? chunk : {};
    } catch {
      return {};
    }
  }

  private track(event: JsonObject): void {
    if (event.type === "content_block_start" && typeof event.index === "number") this.openBlock = event.index;
    else if (event.type === "content_block_stop") this.openBlock = undefined;
    else if (event.type === "response.created" || event.type === "response.in_progress") {
      const response = child(event, "response");
      if (isJsonObject(response)) this.response = response;
    }
  }
}
