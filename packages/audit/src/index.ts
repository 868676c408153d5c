import { createHash } from "node:crypto";

/**
 * The audit trail's rules that do not depend on where it is stored: how a stored document is shown
 * in an entry (secrets never), how an entry is hashed into its account's chain, and how a chain is
 * verified. README.md has the protocol and its glossary.
 */

/** The `prev_hash` of an account's first entry. */
export const GENESIS_HASH = "0".repeat(64);

/** What an entry shows of a secret: never its value, only whether the change set or changed it. */
export const SECRET = {
  kept: "(secret)",
  set: "(secret, set)",
  changed: "(secret, changed)",
} as const;

/**
 * Fields holding a secret or what stands for one: sealed values (`sealed_api_key`,
 * `sealed_credential`, a webhook's sealed signing secret), tokens' hashes, any `secret`.
 */
const isSecretField = (name: string): boolean =>
  name.startsWith("sealed") || name.includes("hash") || name.includes("secret");

/** Fields of a stored document that say nothing to an auditor (Mongoose's version key). */
const isBookkeeping = (name: string): boolean => name === "__v";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A value as plain JSON in one spelling: keys sorted, dates as ISO text, `undefined` left out,
 * `_id` shown as `id`. Two values that mean the same have the same text, on any process.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(plain(value));
}

function plain(value: unknown): Json {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object") {
    if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
      return plain((value as { toJSON(): unknown }).toJSON());
    }
    const fields = Object.entries(value)
      .filter(([key, field]) => field !== undefined && !isBookkeeping(key))
      .map(([key, field]) => [key === "_id" ? "id" : key, field] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const out: { [key: string]: Json } = {};
    for (const [key, field] of fields) out[key] = plain(field);
    return out;
  }
  return String(value);
}

/**
 * A target before and after a change as its entry shows them: plain JSON (`canonicalJson`'s
 * spelling) with every secret field replaced by what `SECRET` says of it. After a change, a secret
 * that differs from its value before is `changed` (`set` when there was none); one left alone
 * stays `kept`. `undefined`: the target did not exist (before a create, after a delete).
 */
export function shownChange(
  before: unknown,
  after: unknown,
): { before: Json | undefined; after: Json | undefined } {
  const plainBefore = before === undefined || before === null ? undefined : plain(before);
  const plainAfter = after === undefined || after === null ? undefined : plain(after);
  return {
    before: plainBefore === undefined ? undefined : hideSecrets(plainBefore, undefined, false),
    after: plainAfter === undefined ? undefined : hideSecrets(plainAfter, plainBefore, true),
  };
}

function hideSecrets(value: Json, was: Json | undefined, isAfter: boolean): Json {
  if (Array.isArray(value)) {
    return value.map((item, index) =>
      hideSecrets(item, Array.isArray(was) ? was[index] : undefined, isAfter),
    );
  }
  if (value === null || typeof value !== "object") return value;
  const earlier = was !== null && typeof was === "object" && !Array.isArray(was) ? was : undefined;
  const out: { [key: string]: Json } = {};
  for (const [key, field] of Object.entries(value)) {
    const before = earlier?.[key];
    if (!isSecretField(key)) {
      out[key] = hideSecrets(field, before, isAfter);
      continue;
    }
    if (field === null) {
      out[key] = null;
    } else if (!isAfter) {
      out[key] = SECRET.kept;
    } else if (before === undefined || before === null) {
      out[key] = SECRET.set;
    } else {
      out[key] = canonicalJson(before) === canonicalJson(field) ? SECRET.kept : SECRET.changed;
    }
  }
  return out;
}

/** What is hashed of an entry: all of it but its own hash. */
export interface Chained {
  /** The entry's place in its account's chain, from 1, without gaps. */
  seq: number;
  /** The hash of the account's entry before it (`GENESIS_HASH` for the first). */
  prev_hash: string;
  hash: string;
}

/** The hash of an entry: SHA-256 (hex) of the canonical JSON of every field but `hash`. */
export function entryHash<E extends Omit<Chained, "hash">>(entry: E): string {
  const { hash: _ignored, ...hashed } = entry as E & { hash?: string };
  return createHash("sha256").update(canonicalJson(hashed)).digest("hex");
}

/** Where a chain's verification starts: its first entry, or the oldest one retention kept. */
export interface ChainAnchor {
  seq: number;
  prev_hash: string;
}

/** Why an entry breaks its chain. */
export type BrokenLink =
  /** Its content does not hash to its `hash`: it was edited. */
  | "hash_mismatch"
  /** Its `prev_hash` is not the entry before's `hash`: an entry before it was replaced or removed. */
  | "prev_hash_mismatch"
  /** Its `seq` does not follow the one before: an entry was removed or inserted. */
  | "seq_gap";

export type ChainVerdict =
  | { intact: true; checked: number; last_seq: number | undefined }
  | { intact: false; checked: number; broken: { seq: number; id: string; reason: BrokenLink } };

/**
 * Verifies one account's entries as they are read, in `seq` order, from `anchor` (the first
 * entry's expected `seq` and `prev_hash`: the genesis when the chain starts at 1, else the oldest
 * entry retention kept). `check` answers whether the entry holds; after the first that does not,
 * the verdict names it and nothing more is checked.
 */
export class ChainVerifier {
  private expected: ChainAnchor;
  private checked = 0;
  private lastSeq: number | undefined;
  private broken: { seq: number; id: string; reason: BrokenLink } | undefined;

  constructor(anchor: ChainAnchor = { seq: 1, prev_hash: GENESIS_HASH }) {
    this.expected = anchor;
  }

  check(entry: Chained & { id: string }): boolean {
    if (this.broken) return false;
    const reason =
      entry.seq !== this.expected.seq
        ? "seq_gap"
        : entry.prev_hash !== this.expected.prev_hash
          ? "prev_hash_mismatch"
          : entryHash(entry) !== entry.hash
            ? "hash_mismatch"
            : undefined;
    if (reason) {
      this.broken = { seq: entry.seq, id: entry.id, reason };
      return false;
    }
    this.checked++;
    this.lastSeq = entry.seq;
    this.expected = { seq: entry.seq + 1, prev_hash: entry.hash };
    return true;
  }

  get verdict(): ChainVerdict {
    return this.broken
      ? { intact: false, checked: this.checked, broken: this.broken }
      : { intact: true, checked: this.checked, last_seq: this.lastSeq };
  }
}

/** `ChainVerifier` over entries at hand. */
export function verifyChain(entries: Iterable<Chained & { id: string }>, anchor?: ChainAnchor): ChainVerdict {
  const verifier = new ChainVerifier(anchor);
  for (const entry of entries) if (!verifier.check(entry)) break;
  return verifier.verdict;
}
