/**
 * Collects items and writes them in batches bounded by size and by time: a batch goes when it
 * holds `maxItems` or when its first item has waited `maxDelayMs`. One batch is written at a time
 * while the next one fills, so the consumer keeps pulling during an insert; `add` waits only when
 * a full batch would otherwise queue behind a running write (backpressure, bounded memory).
 * `write` owns its errors (telemetry naks the batch's messages); it must not reject.
 */
export class BatchWriter<T> {
  private buffer: T[] = [];
  private running: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: {
      maxItems: number;
      maxDelayMs: number;
      write: (items: T[]) => Promise<void>;
    },
  ) {}

  async add(item: T): Promise<void> {
    this.buffer.push(item);
    if (this.buffer.length >= this.options.maxItems) {
      await this.startWrite();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => void this.startWrite(), this.options.maxDelayMs);
    }
  }

  /** Writes what is buffered and resolves when every started write is done (shutdown, tests). */
  async flush(): Promise<void> {
    await this.startWrite();
    await this.running;
  }

  /** Starts writing the buffer after the running write; resolves when that one finished. */
  private startWrite(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.buffer;
    if (items.length === 0) return this.running;
    this.buffer = [];
    const previous = this.running;
    this.running = previous.then(() => this.options.write(items));
    return previous;
  }
}
