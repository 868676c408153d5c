import { setTimeout as sleep } from "node:timers/promises";
import { ChainVerifier, canonicalJson, entryHash, GENESIS_HASH, shownChange } from "@agentnet/audit";
import {
  type AuditActor,
  type AuditEntry,
  type AuditOutcome,
  type AuditPage,
  type AuditQuery,
  type AuditTarget,
  type AuditVerification,
  type Caller,
  DEFAULT_AUDIT_RETENTION_DAYS,
  MIN_AUDIT_RETENTION_DAYS,
} from "@agentnet/contracts";
import { type Logger, newId } from "@agentnet/service-kit";
import type { AuditEntryDoc, AuditModels } from "../store/audit-models";
import { isDuplicateKey } from "../store/models";

/** How a change ended, as its entry says. */
export interface Settled {
  outcome: AuditOutcome;
  /** The HTTP status of a failed or refused attempt. */
  status?: number;
  error_code?: string;
}

/** A change on its way: its intent is stored, its entry not yet. */
export interface Pending {
  id: string;
  account_id: string;
  at: Date;
  actor: AuditActor;
  action: string;
  target: AuditTarget;
  before: unknown;
}

/** An entry to append: the change as it began, and how it ended (the target as stored, secrets included). */
type Appended = Pending & {
  outcome: AuditOutcome;
  status: number | undefined;
  error_code: string | undefined;
  after: unknown;
};

/** How often a writer that lost the race for the chain's next place tries again. */
const MAX_APPEND_ATTEMPTS = 50;
/** The most a loser waits before it tries again, growing per attempt: racing writers spread out. */
const APPEND_BACKOFF_MS = 5;

export const actorOf = (caller: Caller): AuditActor => ({
  user_id: caller.user_id,
  email: caller.email,
  role: caller.role,
  ...(caller.token_id ? { token_id: caller.token_id } : {}),
  ...(caller.session_id ? { session_id: caller.session_id } : {}),
  ...(caller.origin?.address ? { address: caller.origin.address } : {}),
  ...(caller.origin?.user_agent ? { user_agent: caller.origin.user_agent } : {}),
});

/**
 * The audit trail's writes and reads over the configuration store (README of packages/audit has
 * the protocol): a change's intent is stored before the change, its entry appended to the account's
 * chain after it, and the intent removed; `recover` finishes what a stopped process left.
 */
export class AuditJournal {
  /**
   * Appends under way in this process, per account: they take their places one after another, so
   * a burst of changes in one replica never races itself for the chain's next place (replicas
   * still may, and the unique index settles that).
   */
  private readonly appending = new Map<string, Promise<void>>();

  constructor(
    private readonly models: AuditModels,
    private readonly logger: Logger,
  ) {}

  private append(fields: Appended): Promise<void> {
    const before = this.appending.get(fields.account_id) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => this.appendNow(fields));
    const tail = mine.catch(() => undefined);
    this.appending.set(fields.account_id, tail);
    void tail.then(() => {
      if (this.appending.get(fields.account_id) === tail) this.appending.delete(fields.account_id);
    });
    return mine;
  }

  /** Stores the intent of a change before it is made. Throws when the store cannot take it: the change is not made then. */
  async begin(change: Omit<Pending, "id" | "at">): Promise<Pending> {
    const pending: Pending = { ...change, id: newId(), at: new Date() };
    await this.models.AuditIntent.create({
      _id: pending.id,
      account_id: pending.account_id,
      at: pending.at,
      actor: pending.actor,
      action: pending.action,
      target: pending.target,
      ...(pending.before === undefined ? {} : { before_json: canonicalJson(pending.before) }),
    });
    return pending;
  }

  /**
   * Appends the entry of a change made (or refused, or failed), with the target as it is now, and
   * removes its intent. A failure here leaves the intent for `recover`: the change stands and its
   * entry follows.
   */
  async settle(pending: Pending, settled: Settled, after: unknown): Promise<void> {
    try {
      await this.append({
        id: pending.id,
        account_id: pending.account_id,
        at: pending.at,
        actor: pending.actor,
        action: pending.action,
        target: pending.target,
        outcome: settled.outcome,
        status: settled.status,
        error_code: settled.error_code,
        before: pending.before,
        after,
      });
      await this.models.AuditIntent.deleteOne({ _id: pending.id });
    } catch (error) {
      this.logger.error(
        { err: error, audit_entry: pending.id },
        "audit entry not written yet: recovery writes it",
      );
    }
  }

  /** Appends the entry of an attempt that changed nothing (refused before reaching the store). */
  async record(entry: Omit<Pending, "id" | "at" | "before"> & Settled): Promise<void> {
    const { outcome, status, error_code, ...rest } = entry;
    await this.append({
      ...rest,
      id: newId(),
      at: new Date(),
      outcome,
      status,
      error_code,
      before: undefined,
      after: undefined,
    });
  }

  /**
   * Writes the entries of intents older than `olderThanMs` (their process stopped between the
   * change and its entry), the target as `load` finds it now. Idempotent across replicas: an
   * intent's entry has the intent's id, so a second writer finds it written.
   */
  async recover(
    olderThanMs: number,
    load: (accountId: string, target: AuditTarget) => Promise<unknown>,
  ): Promise<number> {
    const stale = await this.models.AuditIntent.find({ at: { $lt: new Date(Date.now() - olderThanMs) } })
      .sort({ at: 1 })
      .limit(100)
      .lean();
    let recovered = 0;
    for (const intent of stale) {
      const after = await load(intent.account_id, intent.target);
      await this.append({
        id: intent._id,
        account_id: intent.account_id,
        at: intent.at,
        actor: intent.actor,
        action: intent.action,
        target: intent.target,
        outcome: "interrupted",
        status: undefined,
        error_code: undefined,
        before: intent.before_json === undefined ? undefined : JSON.parse(intent.before_json),
        after,
      });
      await this.models.AuditIntent.deleteOne({ _id: intent._id });
      recovered++;
    }
    return recovered;
  }

  /** One page of the account's entries, newest first. */
  async list(accountId: string, query: AuditQuery): Promise<AuditPage> {
    const filter: Record<string, unknown> = { account_id: accountId };
    if (query.actor) {
      filter[query.actor.includes("@") ? "actor.email" : "actor.user_id"] = query.actor.toLowerCase();
    }
    if (query.action) {
      filter.action = query.action.includes(".")
        ? query.action
        : { $regex: `^${query.action.replace(/[^A-Za-z0-9_]/g, "")}\\.` };
    }
    if (query.target_type) filter["target.type"] = query.target_type;
    if (query.target_id) filter["target.id"] = query.target_id;
    if (query.outcome) filter.outcome = query.outcome;
    const at: Record<string, Date> = {};
    if (query.from) at.$gte = new Date(query.from);
    if (query.to) at.$lt = new Date(query.to);
    if (Object.keys(at).length > 0) filter.at = at;
    if (query.before_seq !== undefined) filter.seq = { $lt: query.before_seq };
    const docs = await this.models.AuditEntry.find(filter)
      .sort({ seq: -1 })
      .limit(query.limit + 1)
      .lean();
    const page = docs.slice(0, query.limit).map(entryOf);
    const last = page.at(-1);
    return docs.length > query.limit && last
      ? { entries: page, next_before_seq: last.seq }
      : { entries: page };
  }

  /** The account's entry at `seq`, or undefined when there is none (never, or dropped by retention). */
  async get(accountId: string, seq: number): Promise<AuditEntry | undefined> {
    const doc = await this.models.AuditEntry.findOne({ account_id: accountId, seq }).lean();
    return doc ? entryOf(doc) : undefined;
  }

  /** Verifies the account's chain from its oldest kept entry, reading it in order. */
  async verify(accountId: string): Promise<AuditVerification> {
    const oldest = await this.models.AuditEntry.findOne({ account_id: accountId }).sort({ seq: 1 }).lean();
    if (!oldest) return { intact: true, checked: 0 };
    // The oldest kept entry anchors the chain: retention drops entries from the old end only.
    const verifier = new ChainVerifier({ seq: oldest.seq, prev_hash: oldest.prev_hash });
    const cursor = this.models.AuditEntry.find({ account_id: accountId }).sort({ seq: 1 }).lean().cursor();
    for await (const doc of cursor) {
      if (!verifier.check(entryOf(doc as AuditEntryDoc))) break;
    }
    const verdict = verifier.verdict;
    if (!verdict.intact) return { ...verdict, first_seq: oldest.seq };
    return {
      intact: true,
      checked: verdict.checked,
      first_seq: oldest.seq,
      ...(verdict.last_seq === undefined ? {} : { last_seq: verdict.last_seq }),
    };
  }

  /**
   * Drops entries past their account's retention (`DEFAULT_AUDIT_RETENTION_DAYS` unless set), all
   * but each account's newest, from which the chain goes on. Verification then starts at the
   * oldest entry kept.
   */
  async prune(now = new Date()): Promise<number> {
    const day = 86_400_000;
    const candidates: string[] = await this.models.AuditEntry.distinct("account_id", {
      at: { $lt: new Date(now.getTime() - MIN_AUDIT_RETENTION_DAYS * day) },
    });
    let dropped = 0;
    for (const accountId of candidates) {
      const settings = await this.models.AuditSettings.findOne({ _id: accountId }).lean();
      const days = settings?.retention_days ?? DEFAULT_AUDIT_RETENTION_DAYS;
      const newest = await this.models.AuditEntry.findOne({ account_id: accountId }).sort({ seq: -1 }).lean();
      if (!newest) continue;
      // By place, not by time: an entry's `at` is when its change began, which is not always in
      // the order of places (a recovered entry), and the kept entries must be one unbroken run.
      const firstKept = await this.models.AuditEntry.findOne({
        account_id: accountId,
        at: { $gte: new Date(now.getTime() - days * day) },
      })
        .sort({ seq: 1 })
        .lean();
      const removed = await this.models.AuditEntry.deleteMany({
        account_id: accountId,
        seq: { $lt: Math.min(firstKept?.seq ?? newest.seq, newest.seq) },
      });
      dropped += removed.deletedCount;
    }
    return dropped;
  }

  /**
   * Appends one entry at the account's next place: the place after the newest entry, taken by
   * inserting there (a unique index on account and place), again after a writer that took it first.
   * An entry whose id is already in the chain (a recovery that raced another) is not written twice.
   */
  private async appendNow(fields: Appended): Promise<void> {
    const shown = shownChange(fields.before, fields.after);
    for (let attempt = 1; ; attempt++) {
      const newest = await this.models.AuditEntry.findOne({ account_id: fields.account_id })
        .sort({ seq: -1 })
        .lean();
      const entry: AuditEntry = {
        id: fields.id,
        account_id: fields.account_id,
        seq: (newest?.seq ?? 0) + 1,
        at: fields.at.toISOString(),
        actor: fields.actor,
        action: fields.action,
        target: fields.target,
        outcome: fields.outcome,
        ...(fields.status === undefined ? {} : { status: fields.status }),
        ...(fields.error_code ? { error_code: fields.error_code } : {}),
        ...(shown.before === undefined ? {} : { before: shown.before }),
        ...(shown.after === undefined ? {} : { after: shown.after }),
        prev_hash: newest?.hash ?? GENESIS_HASH,
        hash: "",
      };
      entry.hash = entryHash(entry);
      try {
        await this.models.AuditEntry.create(docOf(entry));
        return;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        if (await this.models.AuditEntry.exists({ _id: fields.id })) {
          // Recovery wrote it first (the change outlived AGN_AUDIT_RECOVER_AFTER_SECONDS): its
          // `interrupted` entry stands, and this outcome is only logged.
          this.logger.warn(
            { audit_entry: fields.id, outcome: fields.outcome, action: fields.action },
            "audit entry already written by recovery",
          );
          return;
        }
        if (attempt >= MAX_APPEND_ATTEMPTS) throw error;
        await sleep(Math.random() * APPEND_BACKOFF_MS * Math.min(attempt, 10));
      }
    }
  }
}

const docOf = (entry: AuditEntry): AuditEntryDoc => ({
  _id: entry.id,
  account_id: entry.account_id,
  seq: entry.seq,
  at: new Date(entry.at),
  actor: entry.actor,
  action: entry.action,
  target: entry.target,
  outcome: entry.outcome,
  ...(entry.status === undefined ? {} : { status: entry.status }),
  ...(entry.error_code === undefined ? {} : { error_code: entry.error_code }),
  ...(entry.before === undefined ? {} : { before_json: canonicalJson(entry.before) }),
  ...(entry.after === undefined ? {} : { after_json: canonicalJson(entry.after) }),
  prev_hash: entry.prev_hash,
  hash: entry.hash,
});

const entryOf = (doc: AuditEntryDoc): AuditEntry => ({
  id: doc._id,
  account_id: doc.account_id,
  seq: doc.seq,
  at: doc.at.toISOString(),
  actor: doc.actor,
  action: doc.action,
  target: doc.target,
  outcome: doc.outcome,
  ...(doc.status === undefined || doc.status === null ? {} : { status: doc.status }),
  ...(doc.error_code === undefined || doc.error_code === null ? {} : { error_code: doc.error_code }),
  ...(doc.before_json === undefined || doc.before_json === null
    ? {}
    : { before: JSON.parse(doc.before_json) }),
  ...(doc.after_json === undefined || doc.after_json === null ? {} : { after: JSON.parse(doc.after_json) }),
  prev_hash: doc.prev_hash,
  hash: doc.hash,
});
