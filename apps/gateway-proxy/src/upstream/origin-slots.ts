/**
 * The requests in flight to one upstream origin, at most `limit` at once. A request past the limit
 * waits for a slot, first come first served, no longer than it was told to, and gets none when
 * none freed in time. The origin's pool has as many connections as there are slots, so a request
 * holding a slot never queues inside undici, where nothing would say that it waits.
 */
export class OriginSlots {
  private taken = 0;
  /** Insertion order is arrival order; a waiter that gives up leaves from anywhere in O(1). */
  private readonly waiters = new Set<Waiter>();

  constructor(readonly limit: number) {}

  /** Requests holding a slot. */
  get inFlight(): number {
    return this.taken;
  }

  /** Requests waiting for one. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Takes a slot if one is free now (nobody waits for it first). */
  tryTake(): boolean {
    if (this.taken >= this.limit || this.waiters.size > 0) return false;
    this.taken++;
    return true;
  }

  /**
   * Waits for a slot: true once one is handed over (the caller then holds it), false when none came
   * within `waitMs` or `signal` aborted first.
   */
  wait(waitMs: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        handOver: () => {
          finish();
          resolve(true);
        },
        timer: setTimeout(() => giveUp(), waitMs),
      };
      const giveUp = () => {
        finish();
        resolve(false);
      };
      const finish = () => {
        clearTimeout(waiter.timer);
        signal.removeEventListener("abort", giveUp);
        this.waiters.delete(waiter);
      };
      signal.addEventListener("abort", giveUp, { once: true });
      this.waiters.add(waiter);
    });
  }

  /** Gives a slot back: to the longest waiting request, else free. */
  release(): void {
    for (const waiter of this.waiters) {
      waiter.handOver();
      return;
    }
    this.taken--;
  }
}

interface Waiter {
  handOver(): void;
  timer: ReturnType<typeof setTimeout>;
}
