import type { EventSink, FrameReader, Framing } from "./wire";

/**
 * Server-sent events (text/event-stream), the framing of OpenAI's, Anthropic's and Gemini's
 * streams: events end with a blank line, and the watcher reads each `data:` line.
 */

/** Longest line kept while waiting for its end: an SSE line beyond it is not one we read. */
const MAX_PENDING_CHARS = 1024 * 1024;

class SseReader implements FrameReader {
  private pending = "";
  /** The last whole line was not blank: an event is open until one is. */
  private eventOpen = false;
  private readonly decoder = new TextDecoder();

  get midEvent(): boolean {
    return this.eventOpen || this.pending !== "";
  }

  push(chunk: Uint8Array, sink: EventSink): void {
    this.pending += this.decoder.decode(chunk, { stream: true });
    let newline = this.pending.indexOf("\n");
    while (newline !== -1) {
      const raw = this.pending.slice(0, newline);
      this.eventOpen = raw !== "" && raw !== "\r";
      line(raw, sink);
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf("\n");
    }
    if (this.pending.length > MAX_PENDING_CHARS) this.pending = "";
  }

  end(sink: EventSink): void {
    this.pending += this.decoder.decode();
    if (this.pending !== "") line(this.pending, sink);
    this.pending = "";
  }
}

function line(raw: string, sink: EventSink): void {
  if (raw.startsWith("data:")) sink.data(raw.slice(5).trim());
}

const LF = 0x0a;
const CR = 0x0d;

/** Where the last complete SSE event of `bytes` ends (after its blank line), or -1. */
export function lastSseEventEnd(bytes: Buffer): number {
  // Upstreams flush whole events, so a chunk nearly always ends with one: no search then.
  const end = bytes.length;
  if (end >= 2 && bytes[end - 1] === LF) {
    if (bytes[end - 2] === LF) return end;
    if (end >= 4 && bytes[end - 2] === CR && bytes[end - 3] === LF && bytes[end - 4] === CR) return end;
  }
  const lf = bytes.lastIndexOf("\n\n");
  const crlf = bytes.lastIndexOf("\r\n\r\n");
  if (crlf !== -1 && crlf + 4 > lf + 2) return crlf + 4;
  return lf === -1 ? -1 : lf + 2;
}

/** Where the SSE event starting at `from` ends (after its blank line); the end of `bytes` if it does not. */
export function nextSseEventEnd(bytes: Buffer, from: number): number {
  const lf = bytes.indexOf("\n\n", from);
  const crlf = bytes.indexOf("\r\n\r\n", from);
  if (lf === -1 && crlf === -1) return bytes.length;
  if (crlf === -1 || (lf !== -1 && lf + 2 <= crlf + 4)) return lf + 2;
  return crlf + 4;
}

export const SSE: Framing = {
  carries: (contentType) => contentType.includes("text/event-stream"),
  lastEventEnd: lastSseEventEnd,
  nextEventEnd: nextSseEventEnd,
  reader: () => new SseReader(),
};

/** An SSE event, named when the vendor names its events. */
export const sseEvent = (event: unknown, name?: string) =>
  `${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(event)}\n\n`;
