import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Chained,
  canonicalJson,
  entryHash,
  GENESIS_HASH,
  SECRET,
  shownChange,
  verifyChain,
} from "./index";

type Entry = Chained & { id: string; action: string; after?: unknown };

/** A chain of `count` entries as the journal writes them. */
function chainOf(count: number): Entry[] {
  const entries: Entry[] = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= count; seq++) {
    const entry: Entry = {
      id: `e${seq}`,
      seq,
      action: "groups.update",
      after: { name: `g${seq}` },
      prev_hash: prev,
      hash: "",
    };
    entry.hash = entryHash(entry);
    prev = entry.hash;
    entries.push(entry);
  }
  return entries;
}

describe("canonicalJson", () => {
  it("spells equal values alike whatever their key order, with dates as ISO text and _id as id", () => {
    const at = new Date("2026-12-01T10:00:00.123Z");
    expect(canonicalJson({ b: 1, _id: "x", a: { d: at, c: undefined }, __v: 3 })).toBe(
      '{"a":{"d":"2026-12-01T10:00:00.123Z"},"b":1,"id":"x"}',
    );
  });

  it("is the same text after a round trip through JSON, for any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(JSON.parse(canonicalJson(value)))).toBe(canonicalJson(value));
      }),
    );
  });
});

describe("shownChange", () => {
  it("never shows a secret: only whether the change set, changed or kept it", () => {
    const before = { name: "p", sealed_api_key: { v: 1, kid: "k", ct: "old" }, hash: "h1" };
    const after = { name: "p", sealed_api_key: { v: 1, kid: "k", ct: "new" }, hash: "h1" };
    expect(shownChange(before, after)).toEqual({
      before: { name: "p", sealed_api_key: SECRET.kept, hash: SECRET.kept },
      after: { name: "p", sealed_api_key: SECRET.changed, hash: SECRET.kept },
    });
    expect(shownChange(undefined, { signing_secret: "whsec_x" })).toEqual({
      before: undefined,
      after: { signing_secret: SECRET.set },
    });
    expect(shownChange({ token_hash: "h" }, undefined)).toEqual({
      before: { token_hash: SECRET.kept },
      after: undefined,
    });
  });

  it("hides secrets nested in lists and objects", () => {
    const shown = shownChange(undefined, { servers: [{ sealed_credential: "c", name: "n" }] });
    expect(shown.after).toEqual({ servers: [{ sealed_credential: SECRET.set, name: "n" }] });
  });
});

describe("verifyChain", () => {
  it("holds for a chain as written", () => {
    expect(verifyChain(chainOf(5))).toEqual({ intact: true, checked: 5, last_seq: 5 });
    expect(verifyChain([])).toEqual({ intact: true, checked: 0, last_seq: undefined });
  });

  it("names an edited entry", () => {
    const entries = chainOf(5);
    entries[2] = { ...(entries[2] as Entry), after: { name: "other" } };
    expect(verifyChain(entries)).toEqual({
      intact: false,
      checked: 2,
      broken: { seq: 3, id: "e3", reason: "hash_mismatch" },
    });
  });

  it("names the entry after a removed one, and an entry rehashed without its successors", () => {
    const removed = chainOf(5).filter((entry) => entry.seq !== 3);
    expect(verifyChain(removed)).toMatchObject({ intact: false, broken: { seq: 4, reason: "seq_gap" } });

    const rewritten = chainOf(5);
    const third = { ...(rewritten[2] as Entry), after: { name: "other" } };
    third.hash = entryHash(third);
    rewritten[2] = third;
    expect(verifyChain(rewritten)).toMatchObject({
      intact: false,
      checked: 3,
      broken: { seq: 4, reason: "prev_hash_mismatch" },
    });
  });

  it("starts from the oldest entry retention kept", () => {
    const kept = chainOf(6).slice(3);
    const oldest = kept[0] as Entry;
    expect(verifyChain(kept)).toMatchObject({ intact: false, broken: { seq: 4, reason: "seq_gap" } });
    expect(verifyChain(kept, { seq: oldest.seq, prev_hash: oldest.prev_hash })).toEqual({
      intact: true,
      checked: 3,
      last_seq: 6,
    });
  });

  it("finds any single edit, at the edited entry", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.nat(), fc.string(), (count, at, name) => {
        const entries = chainOf(count);
        const index = at % count;
        const edited = entries[index] as Entry;
        fc.pre(canonicalJson({ name }) !== canonicalJson(edited.after));
        entries[index] = { ...edited, after: { name } };
        expect(verifyChain(entries)).toMatchObject({ intact: false, broken: { seq: index + 1 } });
      }),
    );
  });
});
