import type { GatewaySnapshot, Guardrail } from "@agentnet/contracts";

/** One account's snapshot with what the proxy derives from it once, not per request. */
export interface AccountView {
  snapshot: GatewaySnapshot;
  guardrails: ReadonlyMap<string, Guardrail>;
  /** Unsealed provider credentials, opened on first use (see `ProxyContext.apiKey`). */
  keys: Map<string, string>;
  loadedAt: number;
}

type Load = (accountId: string) => Promise<GatewaySnapshot>;

/**
 * Snapshot per account. `invalidate` (on `agn.config.changed.<account>`) drops the entry, so the
 * next request waits for fresh config. Past `maxAgeMs` (a missed event) the entry is still
 * served while one refresh runs in the background. Concurrent loads of one account share one
 * request, and a load that started before an invalidation is not cached.
 */
export class SnapshotCache {
  private readonly entries = new Map<string, AccountView>();
  private readonly loading = new Map<string, Promise<AccountView>>();
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly load: Load,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(accountId: string): Promise<AccountView> {
    const entry = this.entries.get(accountId);
    if (entry) {
      if (this.now() - entry.loadedAt > this.maxAgeMs) this.refresh(accountId).catch(() => undefined);
      return Promise.resolve(entry);
    }
    return this.refresh(accountId);
  }

  invalidate(accountId: string): void {
    this.entries.delete(accountId);
    this.loading.delete(accountId);
    this.generations.set(accountId, (this.generations.get(accountId) ?? 0) + 1);
  }

  clear(): void {
    for (const accountId of [...this.entries.keys()]) this.invalidate(accountId);
  }

  private refresh(accountId: string): Promise<AccountView> {
    const running = this.loading.get(accountId);
    if (running) return running;
    const generation = this.generations.get(accountId) ?? 0;
    const promise = this.load(accountId)
      .then((snapshot) => {
        const view: AccountView = {
          snapshot,
          guardrails: new Map(snapshot.guardrails.map((guardrail) => [guardrail.id, guardrail])),
          keys: new Map(),
          loadedAt: this.now(),
        };
        if ((this.generations.get(accountId) ?? 0) === generation) this.entries.set(accountId, view);
        return view;
      })
      .finally(() => {
        if (this.loading.get(accountId) === promise) this.loading.delete(accountId);
      });
    this.loading.set(accountId, promise);
    return promise;
  }
}
