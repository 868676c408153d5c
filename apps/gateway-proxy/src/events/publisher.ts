import { isUnpublishable, type UnpublishableMessage } from "@agentnet/bus";
import type { Logger } from "@agentnet/service-kit";
import type { SpanContext } from "@opentelemetry/api";

/**
 * Publishes one message with a dedup id (and the trace of the request it tells of, when traced);
 * rejects when the bus cannot take it now, with `UnpublishableMessage` when it never can.
 */
export type PublishFn = (
  subject: string,
  event: unknown,
  msgId: string,
  trace?: SpanContext,
) => Promise<unknown>;

interface Pending<Event> {
  subject: string;
  event: Event;
  msgId: string;
  trace: SpanContext | undefined;
  /**
   * When it was queued (or last found absent from the stream): a copy may be stored since, by an
   * attempt whose ack was lost or by the consumption leader publishing the admission of a request
   * whose proxy it gave up for dead.
   */
  since: number;
  /** Already cut to fit once: not cut again. */
  shrunk?: boolean;
  /** Called once the stream has it, or it was dropped: what waited for it can go. */
  gone: (() => void) | undefined;
}

/**
 * Which of `events` (each published before, its ack lost, longer ago than the stream's duplicate
 * window) the stream did store, by message id; undefined while that cannot be told yet.
 */
export type StoredCheck<Event> = (events: Event[]) => Promise<ReadonlySet<string> | undefined>;

/** Events asked about in one stored check (the question allows up to 1,000). */
const STORED_CHECK_BATCH = 500;

export interface BufferedPublisherOptions<Event> {
  publish: PublishFn;
  /** Asked before an event is published again later than the duplicate window allows. */
  storedCheck: StoredCheck<Event>;
  /** The event within `limitBytes` of JSON, or undefined when it cannot be made to fit. */
  shrink?: (event: Event, limitBytes: number) => Event | undefined;
  logger: Logger;
  /** Events held while the bus is unavailable; beyond it the oldest are dropped (and counted). */
  maxBuffered: number;
  /** Publishes awaiting their JetStream ack at once: bounds memory and server load. */
  maxInFlight?: number;
  /** Wait before retrying after a failed publish. */
  retryMs?: number;
  /** The request stream's duplicate window: a retry within it is stored once. */
  duplicateWindowMs?: number;
  clock?: () => number;
}

/**
 * Request events leave through here, never blocking the request that produced them. A failed
 * publish (NATS down, JetStream not acking) puts the event back and pauses; publishing resumes on
 * `resume()` (the bus reconnected) or after `retryMs`. Every event carries its request id as
 * Nats-Msg-Id, so one retried after an ack was lost is stored once — within the stream's duplicate
 * window. An event older than that when it would go out (an outage longer than the window) may be
 * in the stream already — an attempt whose ack was lost, or the admission the consumption leader
 * published for it — and a second copy would be stored and counted again: such events wait for
 * `storedCheck` (telemetry, which keeps every request id) and go out only if the stream does not
 * hold them. An event the bus can never carry (too large, refused as malformed) is not retried: it
 * goes out once more shrunk to fit when `shrink` can, else it is dropped; one log line and a count
 * each.
 */
export class BufferedPublisher<Event = unknown> {
  private queue: Pending<Event>[] = [];
  private head = 0;
  /** Events whose publish failed, oldest first: they go out again before anything newer. */
  private retries: Pending<Event>[] = [];
  /** Events past the duplicate window, oldest first, waiting for the stored check. */
  private unconfirmed: Pending<Event>[] = [];
  private checking = false;
  private failedChecks = 0;
  private checkTimer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private paused = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private pumpScheduled = false;
  private idleWaiters: (() => void)[] = [];
  /** Events dropped because the buffer was full. */
  dropped = 0;
  /** Events published (acked by JetStream) since start. */
  published = 0;
  /** Events past the duplicate window that the stored check found in the stream: not published again. */
  foundStored = 0;
  /** Events too large for the bus, published with their long fields cut. */
  truncated = 0;
  /** Events the bus can never carry, even shrunk: dropped. */
  unpublishable = 0;
  /** When the last publish failed and why, until one succeeds again. */
  private failing: { since: string; error: string } | undefined;
  private readonly maxInFlight: number;
  private readonly retryMs: number;
  /** A retry this long after the first attempt still reaches the server inside the duplicate window. */
  private readonly safeRetryMs: number;
  private readonly clock: () => number;

  constructor(private readonly options: BufferedPublisherOptions<Event>) {
    this.maxInFlight = options.maxInFlight ?? 256;
    this.retryMs = options.retryMs ?? 1_000;
    const windowMs = options.duplicateWindowMs ?? 120_000;
    // The server starts the window when it stores the event, after the first attempt left here;
    // the margin covers the retry's own way there.
    this.safeRetryMs = windowMs - Math.min(5_000, windowMs / 10);
    this.clock = options.clock ?? Date.now;
  }

  /** Events waiting (buffered or in flight). */
  get pending(): number {
    return this.buffered + this.inFlight;
  }

  private get buffered(): number {
    return this.unconfirmed.length + this.retries.length + this.queue.length - this.head;
  }

  /** Queues `event`; `gone` is called once the stream has it, or once it was dropped. */
  enqueue(subject: string, event: Event, msgId: string, trace?: SpanContext, gone?: () => void): void {
    this.queue.push({ subject, event, msgId, trace, since: this.clock(), gone });
    this.trim();
    // Publishing after the current I/O phase lets every request that ended in it share one socket
    // write to NATS (nats.js coalesces what is published within one tick); one write per event was
    // the proxy's largest syscall cost under load.
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      setImmediate(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    }
  }

  /** Keeps the buffer within its bound by dropping the oldest events, counted and logged. */
  private trim(): void {
    while (this.buffered > this.options.maxBuffered) {
      const dropped =
        this.unconfirmed.length > 0
          ? this.unconfirmed.shift()
          : this.retries.length > 0
            ? this.retries.shift()
            : this.queue[this.head++];
      dropped?.gone?.();
      this.dropped++;
      // One line per thousand drops: an outage must be visible without flooding the log.
      if (this.dropped % 1_000 === 1) {
        this.options.logger.warn(
          { dropped: this.dropped, bound: this.options.maxBuffered },
          "event buffer full: dropping the oldest request events",
        );
      }
    }
  }

  /** The bus is back: publish what is buffered now rather than at the next retry. */
  resume(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.paused = false;
    this.pump();
  }

  /** Resolves once everything buffered is published, or after `timeoutMs` (clean shutdown). */
  async flush(timeoutMs: number): Promise<boolean> {
    this.resume();
    if (this.pending === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const done = await Promise.race([idle, late]);
    clearTimeout(timer);
    return done;
  }

  stop(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = undefined;
  }

  private take(): Pending<Event> | undefined {
    const retry = this.retries.shift();
    if (retry) return retry;
    if (this.head >= this.queue.length) return undefined;
    const next = this.queue[this.head];
    this.head++;
    // Compact now and then so the array does not grow forever.
    if (this.head > 1_024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return next;
  }

  private pump(): void {
    const now = this.clock();
    while (!this.paused && this.inFlight < this.maxInFlight) {
      const next = this.take();
      if (!next) break;
      if (now - next.since > this.safeRetryMs) {
        this.unconfirmed.push(next);
        continue;
      }
      this.inFlight++;
      this.options.publish(next.subject, next.event, next.msgId, next.trace).then(
        () => this.settled(next),
        (err: unknown) => this.failed(next, err),
      );
    }
    if (this.unconfirmed.length > 0) this.checkStored();
    if (this.pending === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /**
   * Asks which of the oldest unconfirmed events the stream holds: those are done; the others go
   * out again as first attempts. A copy stored too recently for the check to see was stored
   * moments ago, so the new attempt falls inside its duplicate window. Undecided or
   * failed, it asks again after `retryMs`; the events wait in the buffer meanwhile.
   */
  private checkStored(): void {
    if (this.checking || this.checkTimer || this.paused) return;
    this.checking = true;
    const batch = this.unconfirmed.slice(0, STORED_CHECK_BATCH);
    this.options
      .storedCheck(batch.map((item) => item.event))
      .catch((err: unknown) => {
        this.failedChecks++;
        // One line a minute at the retry pace: telemetry being away must show without flooding.
        if (this.failedChecks % 60 === 1) {
          this.options.logger.warn(
            { err, failed_checks: this.failedChecks, waiting: this.unconfirmed.length },
            "cannot tell whether late request events are in the stream; they wait, asking again",
          );
        }
        return undefined;
      })
      .then((stored) => {
        this.checking = false;
        if (stored === undefined) {
          this.checkTimer = setTimeout(() => {
            this.checkTimer = undefined;
            this.pump();
          }, this.retryMs);
          this.checkTimer.unref();
          return;
        }
        // The buffer may have dropped some of the batch meanwhile: only those still waiting move on.
        const decided = new Set(batch);
        const waiting = this.unconfirmed.filter((item) => decided.has(item));
        this.unconfirmed = this.unconfirmed.filter((item) => !decided.has(item));
        const again = waiting.filter((item) => !stored.has(item.msgId));
        for (const item of waiting) if (stored.has(item.msgId)) item.gone?.();
        this.foundStored += waiting.length - again.length;
        const now = this.clock();
        for (const item of again) item.since = now;
        this.retries.unshift(...again);
        this.pump();
      });
  }

  /** What `/status` reports: a proxy that cannot publish says so instead of dropping silently. */
  status() {
    return {
      publishing: this.failing === undefined,
      pending: this.pending,
      buffer_bound: this.options.maxBuffered,
      published: this.published,
      dropped: this.dropped,
      awaiting_stored_check: this.unconfirmed.length,
      found_stored: this.foundStored,
      truncated: this.truncated,
      unpublishable: this.unpublishable,
      ...(this.failing ? { failing_since: this.failing.since, last_error: this.failing.error } : {}),
    };
  }

  private settled(item: Pending<Event>): void {
    this.inFlight--;
    this.published++;
    item.gone?.();
    this.failing = undefined;
    this.pump();
  }

  private failed(item: Pending<Event>, err: unknown): void {
    this.inFlight--;
    if (isUnpublishable(err)) {
      this.cannotCarry(item, err);
      this.pump();
      return;
    }
    this.failing ??= { since: new Date().toISOString(), error: "" };
    this.failing.error = err instanceof Error ? err.message : String(err);
    this.retries.push(item);
    this.trim();
    if (!this.paused) this.options.logger.warn({ err }, "publishing a request event failed; buffering");
    this.paused = true;
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      this.paused = false;
      this.pump();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  private cannotCarry(item: Pending<Event>, err: UnpublishableMessage): void {
    const context = { msg_id: item.msgId, subject: item.subject, reason: err.message };
    const smaller =
      item.shrunk || err.limitBytes === undefined
        ? undefined
        : this.options.shrink?.(item.event, err.limitBytes);
    if (smaller !== undefined) {
      this.truncated++;
      this.options.logger.warn(
        context,
        "request event too large for the bus: its long fields are cut to fit",
      );
      this.retries.push({ ...item, event: smaller, shrunk: true });
      return;
    }
    this.unpublishable++;
    item.gone?.();
    this.options.logger.warn(context, "dropping a request event the bus can never carry");
  }
}
