import type { GatewaySnapshot, Guardrail } from "@agentnet/contracts";
import { Decisions } from "../domain/decision";

/** One account's snapshot with what the proxy derives from it once, not per request. */
export interface AccountView {
  snapshot: GatewaySnapshot;
  guardrails: ReadonlyMap<string, Guardrail>;
  /** Unsealed provider and MCP server credentials, opened on first use (`apiKeyOf`, mcp/relay.ts). */
  keys: Map<string, string>;
  /** Members' own MCP server credentials asked for and found unset (mcp/credentials.ts). */
  unsetCredentials: Set<string>;
  /** Policy decisions made on this snapshot: the same caller asking for the same model is decided once. */
  decisions: Decisions;
  loadedAt: number;
}

/** `fresh`: the account changed since its last load, so a rendering made before is not to be answered. */
type Load = (accountId: string, fresh: boolean) => Promise<GatewaySnapshot>;

/**
 * Why an account's snapshot cannot be had: the load's failure, `repeated` when it is a failure
 * already answered (and logged) that the cache holds for `failureMs`.
 */
export class SnapshotUnavailable extends Error {
  constructor(
    readonly reason: string,
    readonly repeated: boolean,
    options?: ErrorOptions,
  ) {
    super(`the account snapshot cannot be loaded: ${reason}`, options);
    this.name = "SnapshotUnavailable";
  }
}

/**
 * Snapshot per account. `invalidate` (on `agn.config.changed.<account>`) drops the entry, so the
 * next request waits for fresh config. Past `maxAgeMs` (a missed event) the entry is still
 * served while one refresh runs in the background, for at most `staleServeMs` past its load: the
 * proxy keeps serving known accounts through a control-plane, MongoDB or NATS outage that long.
 * `markStale` (on a NATS reconnect, when config events may have been missed) refreshes every entry
 * in the background without dropping it. Concurrent loads of one account share one request, and a
 * load that started before an invalidation is not cached. A failed load of an account without an
 * entry is answered again for `failureMs` (until an invalidation), so the requests of an account
 * whose configuration cannot be loaded cost neither a load each nor a log line each. The first load
 * after an invalidation asks for a fresh rendering: the control-plane replica answering may not
 * have heard of the change yet, and would answer the snapshot it rendered before it.
 */
export class SnapshotCache {
  private readonly entries = new Map<string, AccountView>();
  private readonly loading = new Map<string, Promise<AccountView>>();
  private readonly generations = new Map<string, number>();
  /** Accounts to refresh on next use whatever their age (config events may have been missed). */
  private readonly refreshDue = new Set<string>();
  private readonly failures = new Map<string, { reason: string; cause: unknown; at: number }>();
  /** Accounts invalidated since their last load began: the next load asks for a fresh rendering. */
  private readonly changed = new Set<string>();

  constructor(
    private readonly load: Load,
    private readonly maxAgeMs: number,
    private readonly staleServeMs: number,
    private readonly failureMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(accountId: string): Promise<AccountView> {
    const entry = this.entries.get(accountId);
    if (entry) {
      const age = this.now() - entry.loadedAt;
      if (age > this.maxAgeMs || this.refreshDue.has(accountId)) {
        const refreshing = this.refresh(accountId);
        if (age <= this.staleServeMs) refreshing.catch(() => undefined);
        else return refreshing;
      }
      return Promise.resolve(entry);
    }
    const failure = this.failures.get(accountId);
    if (failure && this.now() - failure.at < this.failureMs) {
      return Promise.reject(new SnapshotUnavailable(failure.reason, true, { cause: failure.cause }));
    }
    return this.refresh(accountId);
  }

  /** Every entry is refreshed on its next use, and served meanwhile (within `staleServeMs`). */
  markStale(): void {
    for (const accountId of this.entries.keys()) this.refreshDue.add(accountId);
  }

  invalidate(accountId: string): void {
    this.entries.delete(accountId);
    this.loading.delete(accountId);
    this.failures.delete(accountId);
    this.changed.add(accountId);
    this.generations.set(accountId, (this.generations.get(accountId) ?? 0) + 1);
  }

  private refresh(accountId: string): Promise<AccountView> {
    const running = this.loading.get(accountId);
    if (running) return running;
    const generation = this.generations.get(accountId) ?? 0;
    // Asked for once: a failed fresh load is answered from the control-plane's failure in hand next.
    const promise = this.load(accountId, this.changed.delete(accountId))
      .then((snapshot) => {
        const guardrails = new Map(snapshot.guardrails.map((guardrail) => [guardrail.id, guardrail]));
        const view: AccountView = {
          snapshot,
          guardrails,
          keys: new Map(),
          unsetCredentials: new Set(),
          decisions: new Decisions({
            providers: snapshot.providers,
            policies: snapshot.policies,
            guardrails,
          }),
          loadedAt: this.now(),
        };
        if ((this.generations.get(accountId) ?? 0) === generation) {
          this.entries.set(accountId, view);
          this.refreshDue.delete(accountId);
          this.failures.delete(accountId);
        }
        return view;
      })
      .catch((cause: unknown) => {
        const reason = cause instanceof Error ? cause.message : String(cause);
        if ((this.generations.get(accountId) ?? 0) === generation) {
          this.failures.set(accountId, { reason, cause, at: this.now() });
        }
        throw new SnapshotUnavailable(reason, false, { cause });
      })
      .finally(() => {
        if (this.loading.get(accountId) === promise) this.loading.delete(accountId);
      });
    this.loading.set(accountId, promise);
    return promise;
  }
}
