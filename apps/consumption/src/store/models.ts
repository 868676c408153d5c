import type { DimensionKind } from "@agentnet/contracts";
import { type Connection, type Model, type mongo, Schema } from "mongoose";
import type { CounterKey, CounterState } from "../domain/reservation";
import type { Actual, Outcome } from "../domain/settlement";

/**
 * One entry of a counter's append-only chain. The entry with the highest `seq` is the counter.
 * Why a chain and not one document updated with `$inc`: FerretDB v1 applies an update as read,
 * modify, write without isolation, so concurrent `$inc`s lose updates (measured: 200 concurrent
 * `$inc`s left 4–8). Inserts against a unique index are atomic on FerretDB and MongoDB alike, so
 * "insert seq n+1 computed from seq n" is a compare-and-set that both honour. FerretDB v1 (SQLite)
 * also scans the whole collection for any filter other than `_id` (explain: filterPushdown false),
 * so the hot path only ever reads entries by `_id`.
 */
export interface LedgerEntryDoc extends CounterState {
  /** `<chain>#<seq>`: the insert that claims the next seq; found by `_id`, which FerretDB looks up directly. */
  _id: string;
  /** `account|kind|dimension|window_seconds|window_start`: the counter this entry belongs to. */
  chain: string;
  seq: number;
  /** `<reservation>:<op>`: unique per chain, so replaying an op after a crash is a no-op. */
  op_id: string;
  account_id: string;
  dimension_kind: DimensionKind;
  dimension_id: string;
  window_seconds: number;
  window_start: Date;
  window_end: Date;
  /** When the entry was written (the service clock): the counter's updated_at. */
  at: Date;
}

/** Written only once every counter holds the estimate: each listed counter has this reservation's hold. */
export interface ReservationDoc {
  _id: string;
  account_id: string;
  request_id: string;
  user_id: string;
  /** Every counter in force for the request; settlement touches exactly these. */
  counters: CounterKey[];
  estimate: { tokens: number; cost_nanos: number };
  expires_at: Date;
  /** Set once an outcome has been applied to every counter; the sweep skips finished ones. */
  finished: boolean;
  created_at: Date;
}

/** The one outcome of a reservation (`_id` = reservation id, or `<id>:late`): inserted, never updated. */
export interface OutcomeDoc {
  _id: string;
  account_id: string;
  reservation_id: string;
  outcome: Outcome;
  event_id?: string;
  actual?: Actual;
  created_at: Date;
}

const ledgerSchema = new Schema<LedgerEntryDoc>(
  {
    _id: String,
    chain: { type: String, required: true },
    seq: { type: Number, required: true },
    op_id: { type: String, required: true },
    account_id: { type: String, required: true },
    dimension_kind: { type: String, required: true },
    dimension_id: { type: String, required: true },
    window_seconds: { type: Number, required: true },
    window_start: { type: Date, required: true },
    window_end: { type: Date, required: true },
    committed_tokens: Number,
    committed_cost_nanos: Number,
    tokens_input: Number,
    tokens_output: Number,
    cost_nanos: Number,
    settled_requests: Number,
    at: { type: Date, required: true },
  },
  // Entries are immutable and stamped with the injectable clock, so mongoose timestamps stay off.
  { versionKey: false },
);
ledgerSchema.index({ chain: 1, seq: -1 });
ledgerSchema.index({ chain: 1, op_id: 1 }, { unique: true });
ledgerSchema.index({ account_id: 1, window_start: -1 });
ledgerSchema.index({ window_end: 1 });
ledgerSchema.index({ at: 1 });

const reservationSchema = new Schema<ReservationDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    request_id: { type: String, required: true },
    user_id: String,
    counters: { type: Schema.Types.Mixed, required: true },
    estimate: { type: Schema.Types.Mixed, required: true },
    expires_at: { type: Date, required: true },
    finished: { type: Boolean, default: false },
    created_at: Date,
  },
  { versionKey: false },
);
// A proxy that retries a reserve after a timeout gets its first reservation back, not a second hold.
reservationSchema.index({ account_id: 1, request_id: 1 }, { unique: true });
reservationSchema.index({ finished: 1, expires_at: 1 });

const outcomeSchema = new Schema<OutcomeDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    reservation_id: { type: String, required: true },
    outcome: { type: String, required: true },
    event_id: String,
    actual: Schema.Types.Mixed,
    created_at: Date,
  },
  { versionKey: false },
);
outcomeSchema.index({ account_id: 1 });
outcomeSchema.index({ created_at: 1 });

export interface Models {
  Ledger: Model<LedgerEntryDoc>;
  Reservation: Model<ReservationDoc>;
  Outcome: Model<OutcomeDoc>;
}

export async function createModels(connection: Connection): Promise<Models> {
  const models: Models = {
    Ledger: connection.model("ConsumptionLedger", ledgerSchema, "consumption_ledger"),
    Reservation: connection.model("ConsumptionReservation", reservationSchema, "consumption_reservations"),
    Outcome: connection.model("ConsumptionOutcome", outcomeSchema, "consumption_outcomes"),
  };
  await Promise.all(Object.values(models).map((model: Model<unknown>) => model.createIndexes()));
  return models;
}

/** True for the duplicate-key error a unique index raises. */
export const isDuplicateKey = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === 11000;

/**
 * The driver collection behind a model, typed by its document. Hot-path inserts go through it:
 * they skip mongoose's hydration, and a string `_id` (the reservation id) is legal there.
 */
export const rawCollection = <T extends mongo.Document>(model: Model<T>): mongo.Collection<T> =>
  model.collection as unknown as mongo.Collection<T>;
