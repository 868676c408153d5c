import type { DimensionKind } from "@agentnet/contracts";
import { type CounterKey, type CounterState, chainId, EMPTY_STATE } from "../domain/reservation";
import { isDuplicateKey, type LedgerEntryDoc, type Models, rawCollection } from "./models";

interface Head {
  seq: number;
  state: CounterState;
  cachedAt: number;
}

export type AppendResult =
  | { kind: "applied"; state: CounterState }
  | { kind: "refused"; state: CounterState }
  /** The op id was already on the chain: a replay after a crash or a redelivery. */
  | { kind: "duplicate" };

/**
 * A head this process wrote or read is a valid starting point this long: entries after it are only
 * compacted away once older than `ledgerCompactionMs` (an hour by default), far beyond this.
 */
const HEAD_CACHE_MS = 10 * 60 * 1000;
/** Conflicts only come from other replicas (this one serialises per chain), so this is generous. */
const MAX_ATTEMPTS = 200;

const entryId = (chain: string, seq: number) => `${chain}#${seq}`;

const stateOf = (doc: CounterState): CounterState => ({
  committed_tokens: doc.committed_tokens,
  committed_cost_nanos: doc.committed_cost_nanos,
  tokens_input: doc.tokens_input,
  tokens_output: doc.tokens_output,
  cost_nanos: doc.cost_nanos,
  settled_requests: doc.settled_requests,
});

/** A counter's current value, as the list endpoint reads it. */
export interface CounterHead extends CounterState {
  dimension_kind: DimensionKind;
  dimension_id: string;
  window_seconds: number;
  window_start: Date;
  at: Date;
}

/**
 * Counters as append-only chains (see LedgerEntryDoc for why). Every change is `append`: take the
 * head, compute the next state (or refuse), insert `<chain>#<seq+1>`. A duplicate key means another
 * replica got there first (walk forward by `_id`, retry) or the op is already applied (done). Writes
 * to one chain are serialised inside this process, and the last head it saw is reused, so an
 * uncontended append is one insert and a contended one a few `_id` reads.
 */
export class Ledger {
  private readonly heads = new Map<string, Head>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly models: Models,
    private readonly clock: () => number,
  ) {}

  append(key: CounterKey, opId: string, next: (state: CounterState) => CounterState | null) {
    const chain = chainId(key);
    return this.serialised(chain, () => this.appendNow(chain, key, opId, next));
  }

  /**
   * The counter's state without writing, brought up to date when the cached one would refuse (another
   * replica may have freed room). Only ever used to deny early; an allow is decided by `append`.
   */
  async peek(key: CounterKey, fits: (state: CounterState) => boolean): Promise<CounterState> {
    const chain = chainId(key);
    const cached = this.cachedHead(chain);
    if (cached && fits(cached.state)) return cached.state;
    return (await this.currentHead(chain)).state;
  }

  /** The head of every counter of the account matching `filter`, newest window first. */
  async counterHeads(accountId: string, filter: Record<string, unknown> = {}): Promise<CounterHead[]> {
    const entries = await this.models.Ledger.find({ account_id: accountId, ...filter }).lean<
      LedgerEntryDoc[]
    >();
    const latest = new Map<string, LedgerEntryDoc>();
    for (const entry of entries) {
      const seen = latest.get(entry.chain);
      if (!seen || seen.seq < entry.seq) latest.set(entry.chain, entry);
    }
    return [...latest.values()]
      .map((entry) => ({
        ...stateOf(entry),
        dimension_kind: entry.dimension_kind,
        dimension_id: entry.dimension_id,
        window_seconds: entry.window_seconds,
        window_start: entry.window_start,
        at: entry.at,
      }))
      .sort(
        (a, b) =>
          b.window_start.getTime() - a.window_start.getTime() ||
          a.window_seconds - b.window_seconds ||
          a.dimension_kind.localeCompare(b.dimension_kind) ||
          a.dimension_id.localeCompare(b.dimension_id),
      );
  }

  /** Forgets cached heads (after an account's counters were deleted, or to bound memory). */
  forget(predicate: (chain: string) => boolean = () => true) {
    for (const chain of this.heads.keys()) if (predicate(chain)) this.heads.delete(chain);
  }

  private async appendNow(
    chain: string,
    key: CounterKey,
    opId: string,
    next: (state: CounterState) => CounterState | null,
  ): Promise<AppendResult> {
    const cached = this.cachedHead(chain);
    let head = cached ?? (await this.currentHead(chain));
    let fresh = cached === undefined;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const state = next(head.state);
      if (!state && !fresh) {
        // Another replica may have freed room since this one cached the head: refuse only when current.
        head = await this.walkForward(chain, head);
        fresh = true;
        continue;
      }
      if (!state) return { kind: "refused", state: head.state };
      const now = this.clock();
      const seq = head.seq + 1;
      try {
        await rawCollection(this.models.Ledger).insertOne({
          _id: entryId(chain, seq),
          chain,
          seq,
          op_id: opId,
          account_id: key.account_id,
          dimension_kind: key.dimension_kind,
          dimension_id: key.dimension_id,
          window_seconds: key.window_seconds,
          window_start: new Date(key.window_start * 1000),
          window_end: new Date((key.window_start + key.window_seconds) * 1000),
          ...state,
          at: new Date(now),
        });
        this.heads.set(chain, { seq, state, cachedAt: now });
        return { kind: "applied", state };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // The seq is free, so the unique (chain, op_id) index refused: this op is already applied.
        if (!(await this.entry(chain, seq))) return { kind: "duplicate" };
        head = await this.walkForward(chain, head);
        fresh = true;
      }
    }
    throw new Error(`counter ${chain} stayed contended for ${MAX_ATTEMPTS} attempts`);
  }

  private cachedHead(chain: string): Head | undefined {
    const head = this.heads.get(chain);
    if (head && this.clock() - head.cachedAt <= HEAD_CACHE_MS) return head;
    return undefined;
  }

  private entry(chain: string, seq: number) {
    return this.models.Ledger.findById(entryId(chain, seq)).lean<LedgerEntryDoc>();
  }

  /** The true head: walk forward from the cached one, or find it when nothing is cached. */
  private async currentHead(chain: string): Promise<Head> {
    const cached = this.cachedHead(chain);
    if (cached) return this.walkForward(chain, cached);
    // Compaction never deletes seq 1, so a chain without it is empty: a new counter costs one `_id` read.
    if (!(await this.entry(chain, 1))) return { seq: 0, state: EMPTY_STATE, cachedAt: this.clock() };
    // A chain this process has not seen lately: the one query that is a scan on FerretDB.
    const latest = await this.models.Ledger.findOne({ chain }).sort({ seq: -1 }).lean<LedgerEntryDoc>();
    const head = latest
      ? { seq: latest.seq, state: stateOf(latest), cachedAt: this.clock() }
      : { seq: 0, state: EMPTY_STATE, cachedAt: this.clock() };
    return this.walkForward(chain, head);
  }

  /** Follows `<chain>#<seq+1>` until it does not exist: entries written by other replicas since. */
  private async walkForward(chain: string, from: Head): Promise<Head> {
    let head = from;
    for (;;) {
      const following = await this.entry(chain, head.seq + 1);
      if (!following) break;
      head = { seq: following.seq, state: stateOf(following), cachedAt: this.clock() };
    }
    this.heads.set(chain, head);
    return head;
  }

  private serialised<T>(chain: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(chain) ?? Promise.resolve();
    const run = previous.then(task, task);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(chain, settled);
    // Drop the queue entry once idle so the map only holds chains with work in flight.
    void settled.then(() => {
      if (this.queues.get(chain) === settled) this.queues.delete(chain);
    });
    return run;
  }
}
