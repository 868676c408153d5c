import { type Caller, type CallersRevokedEvent, revokesCaller } from "@agentnet/contracts";
import { hashToken } from "@agentnet/service-kit";

/** Tokens remembered at most; beyond it the oldest go first (a Map iterates in insertion order). */
const MAX_ENTRIES = 10_000;

type Entry = { caller: Caller | undefined; tokenHash: string; expiresAt: number; resolvedAt: number };

/**
 * Token → caller, cached for a few seconds so a busy SDK does not cost a control-plane round trip
 * per request. Invalid tokens are cached too (a client retrying a bad key must not hammer the
 * control-plane). Concurrent lookups share one.
 *
 * A revocation (`agn.callers.revoked`) drops the callers it names at once, last answer included,
 * and lookups under way when it came are neither shared with later requests nor cached: they may
 * have been answered before the change. After a lost connection (revocations may have been missed)
 * every caller is looked up again before its next use. The TTL only bounds how long a revocation
 * that never arrived goes unnoticed while the control-plane answers.
 *
 * When the control-plane cannot answer (it, MongoDB or NATS is down), a token resolved within
 * `staleServeMs` and not revoked since keeps its last answer: known callers keep working through
 * the outage, and a revocation the proxy did not hear takes effect once the control-plane answers
 * again. Such a caller waits for the lookup `patienceMs` at most, not the bus's whole request
 * timeout (with NATS down a lookup only fails when it times out); the lookup goes on and its answer
 * counts from then on. A token never resolved cannot be decided and fails as the lookup did.
 */
export class CallerCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Caller | undefined>>();
  /** Counts revocations: a lookup that saw it change while under way does not cache its answer. */
  private generation = 0;

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
    const lookup = this.pending.get(token) ?? this.lookUp(token);
    if (!entry || this.now() - entry.resolvedAt > this.staleServeMs) return lookup;
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<Caller | undefined>((resolve) => {
      timer = setTimeout(() => {
        const last = this.lastAnswer(token);
        if (last) resolve(last.caller);
      }, this.patienceMs);
    });
    return Promise.race([lookup, patience]).finally(() => clearTimeout(timer));
  }

  revoke(event: CallersRevokedEvent): void {
    for (const [token, entry] of this.entries) {
      if (entry.caller && revokesCaller(event, entry.caller, entry.tokenHash)) this.entries.delete(token);
    }
    this.forgetLookupsUnderWay();
  }

  /** Every caller is looked up again on its next use; the last answers stay for an outage. */
  distrustAll(): void {
    for (const entry of this.entries.values()) entry.expiresAt = 0;
    this.forgetLookupsUnderWay();
  }

  private forgetLookupsUnderWay() {
    this.generation++;
    this.pending.clear();
  }

  /**
   * The token's last answer, if one may still serve: not revoked since (a revocation drops it) and
   * within `staleServeMs`. It may be newer than the one the request saw: after a reconnect the
   * first lookup that answers replaces it while requests still wait on one sent before, which the
   * reconnect lost.
   */
  private lastAnswer(token: string): Entry | undefined {
    const entry = this.entries.get(token);
    return entry && this.now() - entry.resolvedAt <= this.staleServeMs ? entry : undefined;
  }

  private lookUp(token: string): Promise<Caller | undefined> {
    const generation = this.generation;
    const promise = this.resolve(token)
      .then(
        (caller) => {
          if (this.generation === generation) this.remember(token, caller);
          return caller;
        },
        (error: unknown) => {
          const last = this.lastAnswer(token);
          if (last) return last.caller;
          throw error;
        },
      )
      .finally(() => {
        if (this.pending.get(token) === promise) this.pending.delete(token);
      });
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
    const tokenHash = this.entries.get(token)?.tokenHash ?? hashToken(token);
    this.entries.delete(token);
    this.entries.set(token, { caller, tokenHash, expiresAt: now + this.ttlMs, resolvedAt: now });
  }
}
