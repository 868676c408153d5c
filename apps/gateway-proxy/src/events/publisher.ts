import type { Logger } from "@agentnet/service-kit";

/** Publishes one message with a dedup id; rejects when the bus cannot take it now. */
export type PublishFn = (subject: string, event: unknown, msgId: string) => Promise<unknown>;

interface Pending {
  subject: string;
  event: unknown;
  msgId: string;
  /** When it was first handed to NATS: a retry later than the dedup window could be stored twice. */
  firstSentAt?: number;
}

export interface BufferedPublisherOptions {
  publish: PublishFn;
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
 * Nats-Msg-Id, so one retried after an ack was lost is stored once.
 */
export class BufferedPublisher {
  private queue: Pending[] = [];
  private head = 0;
  /** Events whose publish failed, oldest first: they go out again before anything newer. */
  private retries: Pending[] = [];
  private inFlight = 0;
  private paused = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private pumpScheduled = false;
  private idleWaiters: (() => void)[] = [];
  /** Events dropped because the buffer was full. */
  dropped = 0;
  /** Events published (acked by JetStream) since start. */
  published = 0;
  /**
   * Events published again later than the stream's duplicate window after their first attempt
   * (an outage longer than it): if that attempt was stored but its ack lost, consumption counts
   * the request twice. Counted and logged, so an operator knows to widen the window.
   */
  retriedPastDedupWindow = 0;
  /** When the last publish failed and why, until one succeeds again. */
  private failing: { since: string; error: string } | undefined;
  private readonly maxInFlight: number;
  private readonly retryMs: number;
  private readonly duplicateWindowMs: number;
  private readonly clock: () => number;

  constructor(private readonly options: BufferedPublisherOptions) {
    this.maxInFlight = options.maxInFlight ?? 256;
    this.retryMs = options.retryMs ?? 1_000;
    this.duplicateWindowMs = options.duplicateWindowMs ?? 120_000;
    this.clock = options.clock ?? Date.now;
  }

  /** Events waiting (buffered or in flight). */
  get pending(): number {
    return this.buffered + this.inFlight;
  }

  private get buffered(): number {
    return this.retries.length + this.queue.length - this.head;
  }

  enqueue(subject: string, event: unknown, msgId: string): void {
    this.queue.push({ subject, event, msgId });
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
      if (this.retries.length > 0) this.retries.shift();
      else this.head++;
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
  }

  private take(): Pending | undefined {
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
    while (!this.paused && this.inFlight < this.maxInFlight) {
      const next = this.take();
      if (!next) break;
      this.noteAttempt(next);
      this.inFlight++;
      this.options.publish(next.subject, next.event, next.msgId).then(
        () => this.settled(),
        (err: unknown) => this.failed(next, err),
      );
    }
    if (this.pending === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  private noteAttempt(item: Pending): void {
    const now = this.clock();
    if (item.firstSentAt === undefined) {
      item.firstSentAt = now;
      return;
    }
    if (now - item.firstSentAt <= this.duplicateWindowMs) return;
    this.retriedPastDedupWindow++;
    // Once per event: its first attempt moves into the new window.
    item.firstSentAt = now;
    if (this.retriedPastDedupWindow % 100 === 1) {
      this.options.logger.warn(
        { retried: this.retriedPastDedupWindow, window_ms: this.duplicateWindowMs },
        "request events published again after the stream's duplicate window: one stored before its ack was lost counts twice in consumption (widen AGN_REQUESTS_DEDUP_SECONDS)",
      );
    }
  }

  /** What `/status` reports: a proxy that cannot publish says so instead of dropping silently. */
  status() {
    return {
      publishing: this.failing === undefined,
      pending: this.pending,
      buffer_bound: this.options.maxBuffered,
      published: this.published,
      dropped: this.dropped,
      retried_past_dedup_window: this.retriedPastDedupWindow,
      ...(this.failing ? { failing_since: this.failing.since, last_error: this.failing.error } : {}),
    };
  }

  private settled(): void {
    this.inFlight--;
    this.published++;
    this.failing = undefined;
    this.pump();
  }

  private failed(item: Pending, err: unknown): void {
    this.inFlight--;
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
}
