import { EventStreamCodec, type Message } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import type { EventSink, FrameReader, Framing } from "./wire";

/**
 * AWS's event stream (application/vnd.amazon.eventstream), the framing of Bedrock's streams: each
 * message is a prelude (total length, headers length, CRC), headers (`:message-type`,
 * `:event-type`, `:content-type`), a payload and a CRC, read and written by AWS's own codec.
 */

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** The prelude's total length, headers length and CRC, and the message's own CRC. */
const PRELUDE_BYTES = 12;
const MIN_MESSAGE_BYTES = PRELUDE_BYTES + 4;
/** AWS's bound on one message (its codec refuses longer ones). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** The data a watcher reads of one event message: JSON text, or undefined when it carries none. */
export type EventData = (eventType: string, payload: string) => string | undefined;

/** Where the message at `from` ends, or -1 when it is not whole; the end of `bytes` when it cannot be a message. */
function messageEnd(bytes: Buffer, from: number): number {
  if (bytes.length - from < 4) return -1;
  const length = bytes.readUInt32BE(from);
  if (length < MIN_MESSAGE_BYTES || length > MAX_MESSAGE_BYTES) return bytes.length;
  const end = from + length;
  return end <= bytes.length ? end : -1;
}

class EventStreamReader implements FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly eventData: EventData) {}

  get midEvent(): boolean {
    return this.pending.length > 0;
  }

  push(chunk: Uint8Array, sink: EventSink): void {
    const bytes = this.pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.pending, chunk]);
    let start = 0;
    for (
      let end = messageEnd(bytes, start);
      end !== -1 && start < bytes.length;
      end = messageEnd(bytes, start)
    ) {
      this.message(bytes.subarray(start, end), sink);
      start = end;
    }
    this.pending = start === bytes.length ? Buffer.alloc(0) : Buffer.from(bytes.subarray(start));
  }

  end(): void {
    this.pending = Buffer.alloc(0);
  }

  private message(bytes: Buffer, sink: EventSink): void {
    let message: Message;
    try {
      message = codec.decode(bytes);
    } catch {
      return;
    }
    const { headers } = message;
    if (headers[":message-type"]?.value !== "event") return;
    const eventType = headers[":event-type"]?.value;
    if (typeof eventType !== "string") return;
    const data = this.eventData(eventType, Buffer.from(message.body).toString("utf8"));
    if (data !== undefined) sink.data(data);
  }
}

/** The event-stream framing whose events the watcher reads as `eventData` makes them. */
export function eventStreamFraming(eventData: EventData): Framing {
  return {
    carries: (contentType) => contentType.includes("application/vnd.amazon.eventstream"),
    lastEventEnd(bytes) {
      let start = 0;
      for (let end = messageEnd(bytes, 0); end !== -1 && start < bytes.length; end = messageEnd(bytes, start))
        start = end;
      return start === 0 ? -1 : start;
    },
    nextEventEnd(bytes, from) {
      const end = messageEnd(bytes, from);
      return end === -1 ? bytes.length : end;
    },
    reader: () => new EventStreamReader(eventData),
  };
}

const text = (value: string) => ({ type: "string" as const, value });

/**
 * An exception message (`:exception-type` names it, the payload is `{"message"}`): how AWS reports
 * a failure once a stream has begun; its SDKs raise it as that exception.
 */
export function exceptionMessage(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ":exception-type": text(exceptionType),
      ":content-type": text("application/json"),
      ":message-type": text("exception"),
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

/** An event message: `:event-type` names it, the payload is JSON. */
export function eventMessage(eventType: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ":event-type": text(eventType),
      ":content-type": text("application/json"),
      ":message-type": text("event"),
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}
