/** Longest event kept while waiting for its end; a longer one passes through unread. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Passes a text/event-stream through, handing the `data` of each whole event to `rewrite`: an
 * event it returns new data for is sent with that data (its `id:` and `event:` lines kept), any
 * other byte as the server sent it.
 */
export class SseEventRewriter {
  private pending = "";
  private readonly decoder = new TextDecoder();

  constructor(private readonly rewrite: (data: string) => string | undefined) {}

  /** The text to send now for `chunk`: every event it completes. */
  push(chunk: Uint8Array): string {
    this.pending += this.decoder.decode(chunk, { stream: true });
    let out = "";
    for (;;) {
      const end = eventEnd(this.pending);
      if (end === -1) break;
      out += this.event(this.pending.slice(0, end));
      this.pending = this.pending.slice(end);
    }
    if (this.pending.length > MAX_EVENT_CHARS) {
      out += this.pending;
      this.pending = "";
    }
    return out;
  }

  /** What is left when the stream ends: an event without its blank line, as it is. */
  end(): string {
    const rest = this.pending + this.decoder.decode();
    this.pending = "";
    return rest;
  }

  private event(block: string): string {
    const lines = block.split(/\r?\n/);
    const data = lines
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
    if (data.length === 0) return block;
    const rewritten = this.rewrite(data.join("\n"));
    if (rewritten === undefined) return block;
    const kept = lines.filter((line) => line !== "" && !line.startsWith("data:"));
    return `${[...kept, ...rewritten.split("\n").map((line) => `data: ${line}`)].join("\n")}\n\n`;
  }
}

/** Where the first whole event of `text` ends (after its blank line), or -1. */
function eventEnd(text: string): number {
  const match = /\r?\n\r?\n/.exec(text);
  return match ? match.index + match[0].length : -1;
}
