import { JetStreamApiError, JetStreamError, type PubAck } from "@nats-io/jetstream";
import { createInbox, errors, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/transport-node";

/** How long a publish waits for its ack before it fails (nats.js's own JetStream default). */
const ACK_TIMEOUT_MS = 5_000;

export interface AckedPublisherOptions {
  /** The connection's inbox prefix: the subjects its permissions let it subscribe to. */
  inboxPrefix?: string;
  /** A publish whose ack has not come this long after fails, up to a fifth of it later. */
  ackTimeoutMs?: number;
  /** Called once this publisher can take no more publishes (its connection or subscription ended). */
  onEnd?: () => void;
}

interface Waiter {
  subject: string;
  /** `performance.now()`: a step of the wall clock neither fails nor holds back an ack's wait. */
  sentAt: number;
  resolve: (ack: PubAck) => void;
  reject: (error: Error) => void;
}

const decoder = new TextDecoder();

/**
 * JetStream publishes awaiting their acks, on one connection. nats.js's `js.publish` wraps each in
 * a request of its own (a random token, a timer and its promise, a `TextDecoder`, copies of its
 * options, a retry loop): about a third of what an acked publish cost the publisher
 * (`bench:event-publish`). Here a publish is a core publish with a reply subject under this
 * publisher's inbox, a counter names it, its waiter waits in a map, and one timer fails the
 * publishes whose ack is late. Errors: the stream's refusal is a `JetStreamApiError` (as nats.js
 * gives it); no stream listening, a `JetStreamError` caused by `NoRespondersError`; a late ack, a
 * `TimeoutError`; a publish the server does not permit, its `PermissionViolationError`; a
 * connection closed or drained, `ClosedConnectionError` (a publish sent just before a drain may
 * still be stored: a retry under its Nats-Msg-Id is stored once).
 */
export class AckedPublisher {
  private readonly inbox: string;
  private readonly waiters = new Map<string, Waiter>();
  private next = 0;
  private readonly sweep: NodeJS.Timeout;
  private closed = false;
  private readonly ackTimeoutMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: AckedPublisherOptions = {},
  ) {
    this.ackTimeoutMs = options.ackTimeoutMs ?? ACK_TIMEOUT_MS;
    this.inbox = `${createInbox(options.inboxPrefix)}.`;
    const subscription = nc.subscribe(`${this.inbox}*`, {
      callback: (error, msg) => (error ? this.end(error) : this.settle(msg)),
    });
    void subscription.closed.then(() => this.end(new errors.ClosedConnectionError()));
    this.sweep = setInterval(() => this.expire(), this.ackTimeoutMs / 5).unref();
    void this.watchPermissions();
  }

  publish(subject: string, body: Uint8Array, headers: MsgHdrs): Promise<PubAck> {
    if (this.closed) return Promise.reject(new errors.ClosedConnectionError());
    const token = (this.next++).toString(36);
    return new Promise<PubAck>((resolve, reject) => {
      // Throws on a closed or draining connection, and on a payload over max_payload.
      this.nc.publish(subject, body, { headers, reply: this.inbox + token });
      this.waiters.set(token, { subject, sentAt: performance.now(), resolve, reject });
    });
  }

  private settle(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length);
    const waiter = this.waiters.get(token);
    if (!waiter) return;
    this.waiters.delete(token);
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      waiter.reject(
        new JetStreamError("jetstream is not enabled", {
          cause: new errors.NoRespondersError(waiter.subject),
        }),
      );
      return;
    }
    // Whatever answered, nothing thrown here may reach nats.js's reader: it would stop reading.
    // Any JSON may come (`null`, a number, a string): none has an `error` or a `stream`.
    let ack: (PubAck & { error?: ConstructorParameters<typeof JetStreamApiError>[0] }) | null;
    try {
      ack = JSON.parse(decoder.decode(msg.data));
    } catch (error) {
      waiter.reject(new JetStreamError("invalid ack response", { cause: error }));
      return;
    }
    if (ack?.error) waiter.reject(new JetStreamApiError(ack.error));
    else if (!ack?.stream) waiter.reject(new JetStreamError("invalid ack response"));
    else waiter.resolve({ ...ack, duplicate: ack.duplicate ?? false });
  }

  /** Fails the publishes whose ack is late: the map holds them oldest first. */
  private expire(): void {
    const cutoff = performance.now() - this.ackTimeoutMs;
    for (const [token, waiter] of this.waiters) {
      if (waiter.sentAt > cutoff) return;
      this.waiters.delete(token);
      waiter.reject(new errors.TimeoutError());
    }
  }

  /** A publish the server does not permit is told only on the connection's status: its publishes fail. */
  private async watchPermissions(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (this.closed) return;
      if (status.type !== "error") continue;
      const error = status.error;
      if (!(error instanceof errors.PermissionViolationError) || error.operation !== "publish") continue;
      for (const [token, waiter] of this.waiters) {
        if (waiter.subject !== error.subject) continue;
        this.waiters.delete(token);
        waiter.reject(error);
      }
    }
  }

  private end(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweep);
    this.options.onEnd?.();
    for (const waiter of this.waiters.values()) waiter.reject(error);
    this.waiters.clear();
  }
}

const publishers = new WeakMap<NatsConnection, AckedPublisher>();

/** The connection's acked publisher, made on first use and again after one ended. */
export function ackedPublisherOf(nc: NatsConnection): AckedPublisher {
  let publisher = publishers.get(nc);
  if (!publisher) {
    // nats.js keeps the connection's inbox prefix in its options: `connectBus` sets it to the
    // service's (`inboxPrefix(service)`), the only inbox its permissions let it subscribe to.
    const { inboxPrefix } = (nc as unknown as { options?: { inboxPrefix?: string } }).options ?? {};
    const made = new AckedPublisher(nc, {
      inboxPrefix,
      onEnd: () => {
        if (publishers.get(nc) === made) publishers.delete(nc);
      },
    });
    publisher = made;
    publishers.set(nc, publisher);
  }
  return publisher;
}
