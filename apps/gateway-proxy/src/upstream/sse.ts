import { isJsonObject } from "../domain/json";
import type { Wire } from "../domain/wire";
import { streamedText, streamedUsage, type UsageCounts, zeroUsage } from "./usage";

/** Longest line kept while waiting for its end: an SSE line beyond it is not one we read. */
const MAX_PENDING_CHARS = 1024 * 1024;

/**
 * Watches an SSE response go by (it is forwarded untouched elsewhere) and keeps its usage and,
 * when capturing, its text. Only `data:` lines that can matter are JSON-parsed: the ones that
 * mention usage, or all of them while capturing.
 */
export class SseWatcher {
  usage: UsageCounts = zeroUsage();
  sawUsage = false;
  /** Data events seen: about one token each, what an interrupted stream is charged for its output. */
  events = 0;
  private text = "";
  private pending = "";
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly wire: Wire,
    private readonly captureLimit: number,
  ) {}

  push(chunk: Uint8Array): void {
    this.pending += this.decoder.decode(chunk, { stream: true });
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

  private line(raw: string): void {
    if (!raw.startsWith("data:")) return;
    const data = raw.slice(5).trim();
    if (data === "" || data === "[DONE]") return;
    this.events++;
    const capturing = this.text.length < this.captureLimit;
    if (!capturing && !data.includes('"usage"')) return;
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
    }
    if (capturing) this.text += streamedText(event);
  }
}
