import type { Caller } from "@agentnet/contracts";

/** Tokens remembered at most; beyond it the oldest go first (a Map iterates in insertion order). */
const MAX_ENTRIES = 10_000;

type Entry = { caller: Caller | undefined; expiresAt: number; resolvedAt: number };

/**
 * Token → caller, cached for a few seconds so a busy SDK does not cost a control-plane round trip
 * per request; a revoked token stops working within the TTL. Invalid tokens are cached too (a
 * client retrying a bad key must not hammer the control-plane). Concurrent lookups share one.
 *
 * When the control-plane cannot answer (it, MongoDB or NATS is down), a token resolved within
 * `staleServeMs` keeps its last answer: known callers keep working through the outage, and a
 * revocation made meanwhile takes effect once the control-plane answers again. Such a caller waits
 * for the lookup `patienceMs` at most, not the bus's whole request timeout (with NATS down a lookup
 * only fails when it times out); the lookup goes on and its answer counts from then on. A token
 * never resolved cannot be decided and fails as the lookup did.
 */
export class CallerCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Caller | undefined>>();

  constructor(
    private readonly resolve: (token: string) => Promise<Caller | undefined>,
    private readonly ttlMs: number,
    private readonly staleServeMs: number,
    private readonly now: () => number = Date.now,
    private readonly patienceMs = 250,
  ) {}

  get(token: string): Promise<Caller | undefined> {
    const entry = this.entries.get(token);
    if (entry && entry.expiresAt > this.now()) return Promise.resolve(entry.caller);
    const lookup = this.pending.get(token) ?? this.lookUp(token, entry);
    if (!entry || this.now() - entry.resolvedAt > this.staleServeMs) return lookup;
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<Caller | undefined>((resolve) => {
      timer = setTimeout(() => resolve(entry.caller), this.patienceMs);
    });
    return Promise.race([lookup, patience]).finally(() => clearTimeout(timer));
  }

  private lookUp(token: string, entry: Entry | undefined): Promise<Caller | undefined> {
    const promise = this.resolve(token)
      .then(
        (caller) => {
          this.remember(token, caller);
          return caller;
        },
        (error: unknown) => {
          if (entry && this.now() - entry.resolvedAt <= this.staleServeMs) return entry.caller;
          throw error;
        },
      )
      .finally(() => this.pending.delete(token));
    this.pending.set(token, promise);
    // Answered by the race when it is lost: a failure after the patience ran out is no one's.
    promise.catch(() => undefined);
    return promise;
  }

  private remember(token: string, caller: Caller | undefined) {
    // Without a TTL nothing is cached; the last answer is still kept for outages.
    if (!this.entries.has(token) && this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    const now = this.now();
    this.entries.delete(token);
    this.entries.set(token, { caller, expiresAt: now + this.ttlMs, resolvedAt: now });
  }
}
