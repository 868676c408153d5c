import type { Caller } from "@agentnet/contracts";

/** Tokens remembered at most; beyond it the oldest go first (a Map iterates in insertion order). */
const MAX_ENTRIES = 10_000;

type Entry = { caller: Caller | undefined; expiresAt: number };

/**
 * Token → caller, cached for a few seconds so a busy SDK does not cost a control-plane round trip
 * per request; a revoked token stops working within the TTL. Invalid tokens are cached too (a
 * client retrying a bad key must not hammer the control-plane). Concurrent lookups share one.
 */
export class CallerCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Caller | undefined>>();

  constructor(
    private readonly resolve: (token: string) => Promise<Caller | undefined>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(token: string): Promise<Caller | undefined> {
    const entry = this.entries.get(token);
    if (entry && entry.expiresAt > this.now()) return Promise.resolve(entry.caller);
    const running = this.pending.get(token);
    if (running) return running;
    const promise = this.resolve(token)
      .then((caller) => {
        if (this.ttlMs > 0) {
          if (this.entries.size >= MAX_ENTRIES) {
            const oldest = this.entries.keys().next();
            if (!oldest.done) this.entries.delete(oldest.value);
          }
          this.entries.set(token, { caller, expiresAt: this.now() + this.ttlMs });
        }
        return caller;
      })
      .finally(() => this.pending.delete(token));
    this.pending.set(token, promise);
    return promise;
  }
}
