import { type Counter, type CounterKey, chainId, type UsageDelta } from "@agentnet/caps";
import type { DimensionKind } from "@agentnet/contracts";
import { type Connection, type Model, type mongo, Schema } from "mongoose";

/**
 * Settled usage, persisted as a journal plus snapshots, written by the one replica that holds the
 * consumption lease:
 *
 * - `consumption_journal`: one document per settled batch of events (`_id` = its sequence number,
 *   zero-padded), inserted before the batch is applied in memory and acked on JetStream. A single
 *   insert is atomic on MongoDB and on FerretDB v1 alike — FerretDB v1 applies `$inc` as
 *   read-modify-write without isolation (measured: 200 concurrent `$inc`s left 4–8), so counters
 *   are never incremented in place. A duplicate `_id` means another replica took the lease: this one stops.
 * - `consumption_counters`: a snapshot of each counter (`_id` = counter id), stamped with the last
 *   journal sequence it includes; written every few seconds for the counters that changed.
 * - `consumption_meta`: the watermark, the journal sequence every snapshot write so far covers.
 *
 * A counter's usage is its snapshot plus every journal entry above its stamp (above the watermark
 * for a counter without a snapshot). Journal entries at or below the watermark are only kept as
 * long as their event ids are needed to recognise a redelivery.
 *
 * Shaped for FerretDB v1 on SQLite, which filters on nothing but an `_id` string or ObjectId in
 * the database and decodes every document of the collection for any other filter: a journal entry
 * is deleted by its string `_id` and keeps its event ids as one JSON string, not an array of a
 * thousand. Trimming 240 entries' worth of journal (two minutes at 2,000 events/s) with a range
 * filter over arrays took 1.8 s of FerretDB's CPU every 5 s.
 */

interface KeyFields {
  account_id: string;
  dimension_kind: DimensionKind;
  dimension_id: string;
  window_seconds: number;
  window_start: number;
}

interface DeltaDoc extends KeyFields {
  tokens_input: number;
  tokens_output: number;
  cost_nanos: number;
  /** Absent in entries written before tool calls were counted. */
  tool_calls?: number;
  requests: number;
  at: Date;
}

export interface JournalDoc {
  /** `journalId(seq)`; a number in journals written before it was a string. */
  _id: string | number;
  created_at: Date;
  /** The batch's event ids as a JSON array; an array in journals written before. */
  event_ids: string | string[];
  deltas: DeltaDoc[];
}

/** A journal entry as the leader tracks it until the entry is trimmed. */
export interface JournalRef {
  /** The stored `_id`, to delete the entry by. */
  id: JournalDoc["_id"];
  seq: number;
  /** When it was written (ms). */
  at: number;
}

/** Zero-padded, so the string `_id`s sort as their sequence numbers do. */
const journalId = (seq: number) => String(seq).padStart(16, "0");

const eventIdsOf = (entry: JournalDoc): string[] =>
  typeof entry.event_ids === "string" ? JSON.parse(entry.event_ids) : entry.event_ids;

export interface CounterDoc extends KeyFields {
  _id: string;
  /** When the window ends: what retention prunes by. */
  window_end: Date;
  tokens_input: number;
  tokens_output: number;
  cost_nanos: number;
  /** Absent in snapshots written before tool calls were counted. */
  tool_calls?: number;
  settled_requests: number;
  updated_at: Date;
  journal_seq: number;
}

/** A proxy a leader granted leases to, and the latest it may have been granted one (epoch ms). */
export interface LeaseHolder {
  proxy_id: string;
  until: number;
}

/** What the store says of the leases granted by this durable's leaders (see `extendLeaseHorizon`). */
export interface LeaseHorizon {
  until: number;
  grantsUntil: number;
  holders: LeaseHolder[];
  /** The leadership term that loaded the counters last (see `claimTerm`). */
  term: string | undefined;
}

interface MetaDoc {
  _id: string;
  journal_seq?: number;
  /**
   * `leases:<durable>`: epoch ms until which leases granted so far may still be in use, by proxies
   * riding a NATS outage on them included.
   */
  leases_valid_until?: number;
  /** `leases:<durable>`: epoch ms by which every lease granted so far ends on its TTL. */
  grants_until?: number;
  /**
   * `leases:<durable>`: the `leases_valid_until` the last leader that also keeps `grants_until`
   * and `holders` wrote: when it differs, a leader older than those fields wrote the horizon since,
   * and they do not describe its leases.
   */
  census_until?: number;
  /** `leases:<durable>`: proxies granted leases lately, each with when it was last granted one (at the latest). */
  holders?: LeaseHolder[];
  /** `leases:<durable>`: the leadership term that loaded the counters last (see `claimTerm`). */
  term?: string;
}

const keyFields = {
  account_id: { type: String, required: true },
  dimension_kind: { type: String, required: true },
  dimension_id: { type: String, required: true },
  window_seconds: { type: Number, required: true },
  window_start: { type: Number, required: true },
};

const journalSchema = new Schema<JournalDoc>(
  {
    _id: Schema.Types.Mixed,
    created_at: { type: Date, required: true },
    event_ids: Schema.Types.Mixed,
    deltas: [
      new Schema<DeltaDoc>(
        {
          ...keyFields,
          tokens_input: Number,
          tokens_output: Number,
          cost_nanos: Number,
          tool_calls: Number,
          requests: Number,
          at: Date,
        },
        { _id: false },
      ),
    ],
  },
  { versionKey: false },
);

const counterSchema = new Schema<CounterDoc>(
  {
    _id: String,
    ...keyFields,
    window_end: { type: Date, required: true },
    tokens_input: Number,
    tokens_output: Number,
    cost_nanos: Number,
    tool_calls: Number,
    settled_requests: Number,
    updated_at: Date,
    journal_seq: Number,
  },
  { versionKey: false },
);
counterSchema.index({ account_id: 1 });
counterSchema.index({ window_end: 1 });

const metaSchema = new Schema<MetaDoc>(
  {
    _id: String,
    journal_seq: Number,
    leases_valid_until: Number,
    grants_until: Number,
    census_until: Number,
    holders: [new Schema<LeaseHolder>({ proxy_id: String, until: Number }, { _id: false })],
    term: String,
  },
  { versionKey: false },
);

const WATERMARK = "watermark";

/** Another replica loaded the counters since this term did: its leases are the successor's to know. */
export class TermFencedError extends Error {
  constructor(term: string) {
    super(`leadership term ${term} was followed by another replica's`);
  }
}

/** Another replica wrote this journal sequence: the lease moved on and this replica must stop. */
export class JournalFencedError extends Error {
  constructor(seq: number) {
    super(`journal entry ${seq} was written by another replica`);
  }
}

const isDuplicateKey = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === 11000;

const keyOf = (doc: KeyFields): CounterKey => ({
  account_id: doc.account_id,
  dimension_kind: doc.dimension_kind,
  dimension_id: doc.dimension_id,
  window_seconds: doc.window_seconds,
  window_start: doc.window_start,
});

const deltaDoc = (delta: UsageDelta): DeltaDoc => ({
  ...keyOf(delta.key),
  tokens_input: delta.tokens_input,
  tokens_output: delta.tokens_output,
  cost_nanos: delta.cost_nanos,
  tool_calls: delta.tool_calls,
  requests: delta.requests,
  at: new Date(delta.at),
});

/** What a new leader starts from. */
export interface LoadedUsage {
  deltas: UsageDelta[];
  /** Event ids of the journal entries written within the redelivery horizon of the newest one. */
  recentEventIds: string[];
  /** Every journal entry, oldest first. */
  journal: JournalRef[];
  nextSeq: number;
}

export class UsageStore {
  private constructor(
    private readonly journal: Model<JournalDoc>,
    private readonly counters: Model<CounterDoc>,
    private readonly meta: Model<MetaDoc>,
  ) {}

  static async open(connection: Connection): Promise<UsageStore> {
    const store = new UsageStore(
      connection.model("ConsumptionJournal", journalSchema, "consumption_journal"),
      connection.model("ConsumptionCounter", counterSchema, "consumption_counters"),
      connection.model("ConsumptionMeta", metaSchema, "consumption_meta"),
    );
    await store.counters.createIndexes();
    return store;
  }

  /**
   * Every counter whose window ended at or after `endedAfter` (epoch seconds), as snapshot plus the
   * journal entries above its stamp, and the event ids a redelivery must not count again.
   */
  async load(endedAfter: number, redeliveryHorizonMs: number): Promise<LoadedUsage> {
    const [snapshots, entries, meta] = await Promise.all([
      this.counters.find({ window_end: { $gte: new Date(endedAfter * 1000) } }).lean<CounterDoc[]>(),
      this.journal.find().lean<JournalDoc[]>(),
      this.meta.findById(WATERMARK).lean<MetaDoc>(),
    ]);
    const watermark = meta?.journal_seq ?? 0;
    const journal = entries
      .map((entry) => ({
        entry,
        ref: { id: entry._id, seq: Number(entry._id), at: entry.created_at.getTime() },
      }))
      .sort((a, b) => a.ref.seq - b.ref.seq);
    const stamps = new Map<string, number>();
    const deltas: UsageDelta[] = snapshots.map((doc) => {
      const key = keyOf(doc);
      stamps.set(chainId(key), doc.journal_seq);
      return {
        key,
        tokens_input: doc.tokens_input,
        tokens_output: doc.tokens_output,
        cost_nanos: doc.cost_nanos,
        tool_calls: doc.tool_calls ?? 0,
        requests: doc.settled_requests,
        at: doc.updated_at.getTime(),
      };
    });
    for (const { entry, ref } of journal) {
      for (const doc of entry.deltas) {
        const key = keyOf(doc);
        if (key.window_start + key.window_seconds < endedAfter) continue;
        if (ref.seq <= (stamps.get(chainId(key)) ?? watermark)) continue;
        deltas.push({
          key,
          tokens_input: doc.tokens_input,
          tokens_output: doc.tokens_output,
          cost_nanos: doc.cost_nanos,
          tool_calls: doc.tool_calls ?? 0,
          requests: doc.requests,
          at: doc.at.getTime(),
        });
      }
    }
    const newest = journal.at(-1)?.ref;
    const recentEventIds = journal
      .filter(({ ref }) => newest && ref.at >= newest.at - redeliveryHorizonMs)
      .flatMap(({ entry }) => eventIdsOf(entry));
    const nextSeq = Math.max(watermark, newest?.seq ?? 0) + 1;
    return { deltas, recentEventIds, journal: journal.map(({ ref }) => ref), nextSeq };
  }

  /** Persists one settled batch; throws JournalFencedError when another replica owns `seq`. */
  async append(seq: number, eventIds: string[], deltas: UsageDelta[], now: number): Promise<JournalRef> {
    const doc: JournalDoc = {
      _id: journalId(seq),
      created_at: new Date(now),
      event_ids: JSON.stringify(eventIds),
      deltas: deltas.map(deltaDoc),
    };
    try {
      await rawCollection(this.journal).insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new JournalFencedError(seq);
      throw error;
    }
    return { id: doc._id, seq, at: now };
  }

  /**
   * Writes the counters' snapshots stamped with `seq` (the last journal entry applied to them),
   * then the watermark, then deletes `trimmed`: journal entries at or below `seq` whose event ids
   * can no longer come back.
   */
  async snapshot(counters: Counter[], seq: number, trimmed: JournalRef[]) {
    if (counters.length > 0) {
      // Through the driver: mongoose built and cast a document per counter, 12–18 ms on the
      // thread that decides reservations for a few hundred counters.
      await rawCollection(this.counters).bulkWrite(
        counters.map((counter) => ({
          replaceOne: {
            filter: { _id: chainId(counter) },
            replacement: counterDoc(counter, seq),
            upsert: true,
          },
        })),
        { ordered: false },
      );
    }
    await this.meta.updateOne({ _id: WATERMARK }, { $set: { journal_seq: seq } }, { upsert: true });
    if (trimmed.length > 0) {
      await rawCollection(this.journal).bulkWrite(
        trimmed.map(({ id }) => ({ deleteOne: { filter: { _id: id } } })),
        { ordered: false },
      );
    }
  }

  /**
   * Until when (epoch ms) leases granted by any leader of this durable may still be in use: a new
   * leader grants nothing before then, since it cannot know what the old one leased.
   */
  async leaseHorizon(durable: string): Promise<LeaseHorizon> {
    const doc = await this.meta.findById(`leases:${durable}`).lean<MetaDoc>();
    const until = doc?.leases_valid_until ?? 0;
    // Last written by a leader older than the fields: only the whole horizon is known.
    const current = doc?.census_until === until;
    return {
      until,
      grantsUntil: current ? (doc?.grants_until ?? until) : until,
      holders: current ? (doc?.holders ?? []).map(({ proxy_id, until }) => ({ proxy_id, until })) : [],
      term: doc?.term,
    };
  }

  /**
   * Records that `term` loaded the counters: a replica that lost its leadership and wins it back
   * may keep its state only while the record still names its own term (nobody led in between).
   */
  async claimTerm(durable: string, term: string) {
    await this.meta.updateOne({ _id: `leases:${durable}` }, { $set: { term } }, { upsert: true });
  }

  /**
   * Records how long leases may be in use (`until`), how long granted ones last (`grantsUntil`) and
   * who holds them: written before any grant past the last values, and by a leader that lost NATS.
   * Only while the record names `term`: a leader deposed since (another loaded the counters) can
   * no longer widen what its successor read, so it cannot grant past it either.
   */
  async extendLeaseHorizon(
    durable: string,
    term: string,
    horizon: Partial<Pick<LeaseHorizon, "until" | "grantsUntil" | "holders">>,
  ) {
    const written = await this.meta.updateOne(
      { _id: `leases:${durable}`, term },
      {
        $set: {
          ...(horizon.until === undefined
            ? {}
            : { leases_valid_until: horizon.until, census_until: horizon.until }),
          ...(horizon.grantsUntil === undefined ? {} : { grants_until: horizon.grantsUntil }),
          ...(horizon.holders === undefined ? {} : { holders: horizon.holders }),
        },
      },
    );
    if (written.matchedCount === 0) throw new TermFencedError(term);
  }

  /** Deletes snapshots of windows that ended before `endedBefore` (epoch seconds). */
  async pruneEnded(endedBefore: number) {
    await this.counters.deleteMany({ window_end: { $lt: new Date(endedBefore * 1000) } });
  }

  /** Deletes an account's snapshots; call after a snapshot, so no journal entry above the watermark names it. */
  async deleteAccount(accountId: string) {
    await this.counters.deleteMany({ account_id: accountId });
  }
}

function counterDoc(counter: Counter, seq: number): CounterDoc {
  return {
    _id: chainId(counter),
    ...keyOf(counter),
    window_end: new Date((counter.window_start + counter.window_seconds) * 1000),
    tokens_input: counter.tokens_input,
    tokens_output: counter.tokens_output,
    cost_nanos: counter.cost_nanos,
    tool_calls: counter.tool_calls,
    settled_requests: counter.settled_requests,
    updated_at: new Date(counter.updated_at),
    journal_seq: seq,
  };
}

/** The driver collection behind a model: writes skip mongoose's casting and hydration. */
const rawCollection = <T extends mongo.Document>(model: Model<T>): mongo.Collection<T> =>
  model.collection as unknown as mongo.Collection<T>;
