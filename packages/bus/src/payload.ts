import { AppError } from "@agentnet/contracts";
import type { NatsConnection } from "@nats-io/transport-node";

/** nats-server's default max_payload: assumed until the connection has the server's INFO. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/**
 * The largest message (payload and headers) the server takes. nats.js throws, synchronously, on a
 * larger publish or respond: inside a timer or a subscription callback that ends the process.
 */
export const maxPayloadOf = (nc: NatsConnection): number => nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;

/**
 * UTF-8 bytes as they go on the wire, so their length is the size nats.js checks. `Buffer.from`
 * rather than a `TextEncoder`, faster for the small strings the bus carries;
 * the same bytes (a lone surrogate becomes U+FFFD in both).
 */
export const encodeText = (text: string): Uint8Array => Buffer.from(text, "utf8");

/**
 * A message the bus can never carry: larger than the server takes, or refused by the server as
 * malformed. Retrying cannot help, so callers shrink it or drop it instead of trying again.
 */
export class UnpublishableMessage extends Error {
  constructor(
    message: string,
    /** Set when it was refused for its size: the most its payload may take. */
    readonly limitBytes?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "UnpublishableMessage";
  }
}

export const isUnpublishable = (error: unknown): error is UnpublishableMessage =>
  error instanceof UnpublishableMessage;

/** The 413 an endpoint's request or reply gets when it is larger than the bus carries. */
export const tooLargeToCarry = (what: string, bytes: number, limit: number) =>
  new AppError(
    413,
    "payload_too_large",
    `${what} is too large to carry (${bytes} bytes; the bus carries at most ${limit})`,
  );

/**
 * Publishes on core NATS without ever throwing: a message larger than the server takes, or a
 * connection closed or draining, is handed to `onRefused`. For publishes from timers and callbacks,
 * where a throw would end the process. Returns whether the message left.
 */
export function publishOrReport(
  nc: NatsConnection,
  subject: string,
  payload: string,
  onRefused: (error: Error) => void,
): boolean {
  if (nc.isClosed()) return false;
  const bytes = encodeText(payload);
  const limit = maxPayloadOf(nc);
  if (bytes.length > limit) {
    onRefused(new UnpublishableMessage(`${bytes.length} bytes on ${subject} exceed max_payload`, limit));
    return false;
  }
  try {
    nc.publish(subject, bytes);
    return true;
  } catch (error) {
    onRefused(error instanceof Error ? error : new Error(String(error)));
    return false;
  }
}
