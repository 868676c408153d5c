import type { AuditActor, AuditOutcome, AuditTarget } from "@agentnet/contracts";
import { type Connection, type Model, Schema } from "mongoose";

/**
 * One entry of an account's audit chain (packages/audit, src/audit/journal.ts). The target before
 * and after are stored as their canonical JSON text: hashed as written, whatever field names a
 * stored document holds.
 */
export interface AuditEntryDoc {
  _id: string;
  account_id: string;
  seq: number;
  at: Date;
  actor: AuditActor;
  action: string;
  target: AuditTarget;
  outcome: AuditOutcome;
  status?: number;
  error_code?: string;
  before_json?: string;
  after_json?: string;
  prev_hash: string;
  hash: string;
}

/**
 * A change about to be made: written before it, removed once its entry is in the chain. One left
 * behind says a process stopped between the two; recovery writes its entry (`interrupted`).
 */
export interface AuditIntentDoc {
  _id: string;
  account_id: string;
  at: Date;
  actor: AuditActor;
  action: string;
  target: AuditTarget;
  /** The target as stored before the change (sealed values as stored: the entry shows whether they changed). */
  before_json?: string;
}

const actor = { type: Schema.Types.Mixed, required: true };
const target = { type: Schema.Types.Mixed, required: true };

const entrySchema = new Schema<AuditEntryDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    seq: { type: Number, required: true },
    at: { type: Date, required: true },
    actor,
    action: { type: String, required: true },
    target,
    outcome: { type: String, required: true },
    status: Number,
    error_code: String,
    before_json: String,
    after_json: String,
    prev_hash: { type: String, required: true },
    hash: { type: String, required: true },
  },
  { minimize: false, versionKey: false },
);
// One entry per place in the chain: two writers racing for the next place, one wins, one retries.
entrySchema.index({ account_id: 1, seq: 1 }, { unique: true });
entrySchema.index({ account_id: 1, at: 1 });

const intentSchema = new Schema<AuditIntentDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    at: { type: Date, required: true },
    actor,
    action: { type: String, required: true },
    target,
    before_json: String,
  },
  { minimize: false, versionKey: false },
);
intentSchema.index({ at: 1 });

/** An account's audit settings; an account without one keeps entries `DEFAULT_AUDIT_RETENTION_DAYS`. */
export interface AuditSettingsDoc {
  /** The account's id: one per account. */
  _id: string;
  account_id: string;
  retention_days: number;
  updated_at: Date;
}

const settingsSchema = new Schema<AuditSettingsDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    retention_days: { type: Number, required: true },
  },
  { timestamps: { createdAt: false, updatedAt: "updated_at" }, versionKey: false },
);

export interface AuditModels {
  AuditEntry: Model<AuditEntryDoc>;
  AuditIntent: Model<AuditIntentDoc>;
  AuditSettings: Model<AuditSettingsDoc>;
}

export async function createAuditModels(connection: Connection): Promise<AuditModels> {
  const models: AuditModels = {
    AuditEntry: connection.model("AuditEntry", entrySchema, "audit_entries"),
    AuditIntent: connection.model("AuditIntent", intentSchema, "audit_intents"),
    AuditSettings: connection.model("AuditSettings", settingsSchema, "audit_settings"),
  };
  await Promise.all(Object.values(models).map((model: Model<unknown>) => model.createIndexes()));
  return models;
}
