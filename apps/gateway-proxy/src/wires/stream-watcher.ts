import { isJsonObject, type JsonObject } from "../domain/json";
import { answeringModel, streamedText, type UsageCounts, zeroUsage } from "./usage";
import type { EventSink, FrameReader, StreamFormat, StreamStructure } from "./wire";

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

/**
 * The pause after which a stream counts as slow, its events scanned as they come, and the age at
 * which waiting delta events are scanned by the next chunk. Kept longer, they outlive V8's young
 * generation: every scavenge copies them and the next promotes them (with 9,500 slow streams open,
 * 2.6 MB a second promoted, and scavenges of ~30 ms stall every request the proxy serves).
 */
const MAX_UNSCANNED_MS = 100;

/**
 * Watches a streamed answer go by and keeps its usage and, when capturing, its text. Its framing
 * (server-sent events, AWS's event stream) turns bytes into each event's data; only data that can
 * matter is JSON-parsed: what mentions usage, or all of it while capturing or tracking output (a capped stream, which grows its hold as output arrives and may
 * be ended here in the vendor's own format: `ending()`). What differs by wire is its `StreamFormat`.
 */
export class StreamWatcher implements EventSink {
  usage: UsageCounts = zeroUsage();
  sawUsage = false;
  /** The model the vendor names in the events that carry usage (`answeringModel`). */
  model: string | undefined;
  /** Data events seen: about one token each, what an interrupted stream is charged for its output. */
  events = 0;
  private text = "";
  /** Generated characters of the delta events scanned so far. */
  private outputChars = 0;
  /** Delta events not scanned yet, and the whole length of every delta event: a bound on outputChars. */
  private unscanned: string[] = [];
  private unscannedChars = 0;
  /** `performance.now()` when the oldest unscanned event came. */
  private unscannedSince = 0;
  private lastPushAt = performance.now();
  private deltaEventChars = 0;
  /**
   * What an ending needs: the first event the format names (its id, model and created; kept as it
   * came, parsed only by an ending), and what the format tracks of the events (`StreamStructure`).
   */
  private firstEvent: string | undefined;
  private readonly structure: StreamStructure = { openBlock: undefined, response: undefined };
  private readonly reader: FrameReader;

  constructor(
    private readonly format: StreamFormat,
    private readonly captureLimit: number,
    private readonly trackOutput = false,
  ) {
    this.reader = format.framing.reader();
  }

  /** Bytes of the stream as they came; its framing finds the events in them. */
  push(chunk: Uint8Array): void {
    if (!this.trackOutput) {
      // Nothing is kept unscanned: no clock to read.
      this.reader.push(chunk, this);
      return;
    }
    const now = performance.now();
    const slow = now - this.lastPushAt >= MAX_UNSCANNED_MS;
    this.lastPushAt = now;
    this.reader.push(chunk, this);
    if (this.unscanned.length > 0 && (slow || now - this.unscannedSince >= MAX_UNSCANNED_MS)) this.scan();
  }

  end(): void {
    this.reader.end(this);
  }

  /** Whether the stream so far ends inside an event, so that no event of the proxy's can follow it. */
  get midEvent(): boolean {
    return this.reader.midEvent;
  }

  /** The event that ends this stream when its upstream broke it off, in the vendor's format. */
  broken(message: string): string | Uint8Array {
    return this.format.broken(message);
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
    this.unscanned.length = 0;
    this.unscannedChars = 0;
  }

  /** The events that end this stream as if the model had reached its output limit, in the vendor's format. */
  ending(): string | Uint8Array {
    return this.format.ending({
      usage: this.usage,
      outputTokens: this.outputTokens(),
      firstEvent: this.parsedFirstEvent(),
      ...this.structure,
    });
  }

  /** One event's data, as its framing read it (an SSE event's `data:` line). */
  data(data: string): void {
    if (data === "" || data === "[DONE]") return;
    this.events++;
    if (this.trackOutput) this.keep(data);
    const capturing = this.text.length < this.captureLimit;
    const structural = this.trackOutput && this.isStructural(data);
    if (!capturing && !structural && !this.format.mentionsUsage(data)) return;
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (!isJsonObject(event)) return;
    const usage = this.format.usage(event, this.usage);
    if (usage) {
      this.usage = usage;
      this.sawUsage = true;
      this.model ??= answeringModel(event);
    }
    if (capturing) this.text += streamedText(event);
    if (this.trackOutput) this.format.track(event, this.structure);
  }

  /** What a capped stream keeps of an event without parsing it: delta text to count, the first event. */
  private keep(data: string): void {
    if (this.format.generates(data)) {
      if (this.unscanned.length === 0) this.unscannedSince = this.lastPushAt;
      this.unscanned.push(data);
      this.unscannedChars += data.length;
      this.deltaEventChars += data.length;
      if (this.unscannedChars > MAX_UNSCANNED_CHARS) this.scan();
    }
    const marker = this.format.firstEventMarker;
    if (this.firstEvent === undefined && marker !== undefined && data.includes(marker))
      this.firstEvent = data;
  }

  /** Whether an ending needs this event: cheap string tests first, a stream has many deltas. */
  private isStructural(data: string): boolean {
    return this.format.structural(data, this.firstEvent !== undefined);
  }

  private parsedFirstEvent(): JsonObject {
    try {
      const event: unknown = JSON.parse(this.firstEvent ?? "{}");
      return isJsonObject(event) ? event : {};
    } catch {
      return {};
    }
  }
}
