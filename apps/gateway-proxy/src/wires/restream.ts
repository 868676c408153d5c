import type { EventSink, Framing } from "./wire";

/**
 * How a vendor's answer becomes the one the caller's wire speaks when the two differ: a stream
 * whose events the two frame differently (Claude's events in Bedrock's event stream for a caller of
 * Anthropic's Messages API, and the other way round), passed event by event as they are; and a
 * whole JSON answer of another shape (Bedrock's token count for Anthropic's).
 */
export interface Restream {
  /** The framing the vendor streams in. */
  readonly from: Framing;
  /** The content type of the stream the caller gets. */
  readonly contentType: string;
  /** One of the vendor's events (its data) as the caller's wire frames it. */
  frame(data: string): string | Uint8Array;
  /** A whole successful JSON answer in the caller's wire's shape, when the two differ. */
  json?(answer: unknown): unknown;
}

/** The events of one chunk, framed for the caller. */
class Reframed implements EventSink {
  parts: Buffer[] = [];

  constructor(private readonly restream: Restream) {}

  data(data: string): void {
    const framed = this.restream.frame(data);
    this.parts.push(typeof framed === "string" ? Buffer.from(framed) : Buffer.from(framed));
  }

  take(): Buffer | undefined {
    if (this.parts.length === 0) return undefined;
    const taken = Buffer.concat(this.parts);
    this.parts = [];
    return taken;
  }
}

/** The vendor's stream `body`, its events framed as the caller's wire frames them. */
export async function* restreamed(body: AsyncIterable<unknown>, restream: Restream): AsyncIterable<Buffer> {
  const reader = restream.from.reader();
  const reframed = new Reframed(restream);
  for await (const chunk of body) {
    reader.push(chunk as Uint8Array, reframed);
    const framed = reframed.take();
    if (framed) yield framed;
  }
  reader.end(reframed);
  const framed = reframed.take();
  if (framed) yield framed;
}
