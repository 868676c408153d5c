import type { DimensionKind } from "@agentnet/contracts";
import { type Connection, type Model, type mongo, Schema } from "mongoose";
import type { Counter, UsageDelta } from "../domain/counter-book";
import { type CounterKey, chainId } from "../domain/reservation";

/**
 * Settled usage, persisted as a journal plus snapshots, written by the one replica that holds the
 * consumption lease:
 *
 * - `consumption_journal`: one document per settled batch of events (`_id` = a sequence number),
 *   inserted before the batch is applied in memory and acked on JetStream. A single insert is
 *   atomic on MongoDB and on FerretDB v1 alike — FerretDB v1 applies `$inc` as read-modify-write
 *   without isolation (measured: 200 concurrent `$inc`s left 4–8), so counters are never
 *   incremented in place. A duplicate `_id` means another replica took the lease: this one stops.
 * - `consumption_counters`: a snapshot of each counter (`_id` = counter id), stamped with the last
 *   journal sequence it includes; written every few seconds for the counters that changed.
 * - `consumption_meta`: the watermark, the journal sequence every snapshot write so far covers.
 *
 * A counter's usage is its snapshot plus every journal entry above its stamp (above the watermark
 * for a counter without a snapshot). Journal entries at or below the watermark are only kept as
 * long as their event ids are needed to recognise a redelivery.
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
  requests: number;
  at: Date;
}

export interface JournalDoc {
  _id: number;
  created_at: Date;
  event_ids: string[];
  deltas: DeltaDoc[];
}

export interface CounterDoc extends KeyFields {
  _id: string;
  /** When the window ends: what retention prunes by. */
  window_end: Date;
  tokens_input: number;
  tokens_output: number;
  cost_nanos: number;
  settled_requests: number;
  updated_at: Date;
  journal_seq: number;
}

interface MetaDoc {
  _id: string;
  journal_seq: number;
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
    _id: Number,
    created_at: { type: Date, required: true },
    event_ids: [String],
    deltas: [
      new Schema<DeltaDoc>(
        {
          ...keyFields,
          tokens_input: Number,
          tokens_output: Number,
          cost_nanos: Number,
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
    settled_requests: Number,
    updated_at: Date,
    journal_seq: Number,
  },
  { versionKey: false },
);
counterSchema.index({ account_id: 1 });
counterSchema.index({ window_end: 1 });

const metaSchema = new Schema<MetaDoc>({ _id: String, journal_seq: Number }, { versionKey: false });

const WATERMARK = "watermark";

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
  requests: delta.requests,
  at: new Date(delta.at),
});

/** What a new leader starts from. */
export interface LoadedUsage {
  deltas: UsageDelta[];
  /** Event ids of the journal entries written within the redelivery horizon of the newest one. */
  recentEventIds: string[];
  /** When the newest journal entry was written (ms), 0 without any. */
  newestJournalAt: number;
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
    const [snapshots, journal, meta] = await Promise.all([
      this.counters.find({ window_end: { $gte: new Date(endedAfter * 1000) } }).lean<CounterDoc[]>(),
      this.journal.find().sort({ _id: 1 }).lean<JournalDoc[]>(),
      this.meta.findById(WATERMARK).lean<MetaDoc>(),
    ]);
    const watermark = meta?.journal_seq ?? 0;
    const stamps = new Map<string, number>();
    const deltas: UsageDelta[] = snapshots.map((doc) => {
      const key = keyOf(doc);
      stamps.set(chainId(key), doc.journal_seq);
      return {
        key,
        tokens_input: doc.tokens_input,
        tokens_output: doc.tokens_output,
        cost_nanos: doc.cost_nanos,
        requests: doc.settled_requests,
        at: doc.updated_at.getTime(),
      };
    });
    for (const entry of journal) {
      for (const doc of entry.deltas) {
        const key = keyOf(doc);
        if (key.window_start + key.window_seconds < endedAfter) continue;
        if (entry._id <= (stamps.get(chainId(key)) ?? watermark)) continue;
        deltas.push({
          key,
          tokens_input: doc.tokens_input,
          tokens_output: doc.tokens_output,
          cost_nanos: doc.cost_nanos,
          requests: doc.requests,
          at: doc.at.getTime(),
        });
      }
    }
    const newest = journal.at(-1);
    const newestJournalAt = newest ? newest.created_at.getTime() : 0;
    const recentEventIds = journal
      .filter((entry) => entry.created_at.getTime() >= newestJournalAt - redeliveryHorizonMs)
      .flatMap((entry) => entry.event_ids);
    return { deltas, recentEventIds, newestJournalAt, nextSeq: Math.max(watermark, newest?._id ?? 0) + 1 };
  }

  /** Persists one settled batch; throws JournalFencedError when another replica owns `seq`. */
  async append(seq: number, eventIds: string[], deltas: UsageDelta[], now: number) {
    const doc: JournalDoc = {
      _id: seq,
      created_at: new Date(now),
      event_ids: eventIds,
      deltas: deltas.map(deltaDoc),
    };
    try {
      await rawCollection(this.journal).insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new JournalFencedError(seq);
      throw error;
    }
  }

  /**
   * Writes the counters' snapshots stamped with `seq` (the last journal entry applied to them),
   * then the watermark, then drops journal entries the snapshots cover that are older than
   * `keepEventIdsSince` (ms): their event ids can no longer come back.
   */
  async snapshot(counters: Counter[], seq: number, keepEventIdsSince: number) {
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
    await this.journal.deleteMany({ _id: { $lte: seq }, created_at: { $lt: new Date(keepEventIdsSince) } });
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
    settled_requests: counter.settled_requests,
    updated_at: new Date(counter.updated_at),
    journal_seq: seq,
  };
}

/** The driver collection behind a model: writes skip mongoose's casting and hydration. */
const rawCollection = <T extends mongo.Document>(model: Model<T>): mongo.Collection<T> =>
  model.collection as unknown as mongo.Collection<T>;
