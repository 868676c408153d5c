import type { UsageDelta } from "@agentnet/caps";
import { connectTestMongo, uniqueId } from "@agentnet/testkit";
import type { Connection } from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JournalDoc, UsageStore } from "./usage-store";

const HOUR = 3600;
const NOW = Date.UTC(2031, 0, 1, 10, 0, 0);
const HORIZON_MS = 120_000;

let base: Connection;
let connection: Connection;
beforeAll(async () => {
  base = await connectTestMongo();
  connection = base.useDb("agentnet_test_consumption_store", { useCache: false });
  await connection.dropDatabase();
});
afterAll(async () => {
  await connection.dropDatabase();
  await base.close();
});

const deltaOf = (accountId: string, tokens: number): UsageDelta => ({
  key: {
    account_id: accountId,
    dimension_kind: "user",
    dimension_id: "u1",
    window_seconds: HOUR,
    window_start: NOW / 1000 - ((NOW / 1000) % HOUR),
  },
  tokens_input: tokens,
  tokens_output: 0,
  cost_nanos: 0,
  tool_calls: 0,
  requests: 1,
  at: NOW,
});

const journalIds = async () =>
  (await connection.collection<JournalDoc>("consumption_journal").find().toArray()).map((doc) => doc._id);

describe("usage store journal", () => {
  it("loads appended entries in sequence order and deletes exactly the trimmed ones", async () => {
    const store = await UsageStore.open(connection);
    const accountId = uniqueId("acc");
    // Past 9 the padded ids must still sort as numbers: 10 after 9, not after 1.
    const refs = [];
    for (let seq = 1; seq <= 11; seq++) {
      refs.push(await store.append(seq, [`e${seq}`], [deltaOf(accountId, seq)], NOW + seq));
    }

    const loaded = await store.load(0, HORIZON_MS);
    expect(loaded.journal).toEqual(refs);
    expect(loaded.journal.map((ref) => ref.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(loaded.nextSeq).toBe(12);
    expect(loaded.recentEventIds).toHaveLength(11);
    expect(loaded.deltas.reduce((sum, delta) => sum + delta.tokens_input, 0)).toBe(66);

    await store.snapshot([], 11, refs.slice(0, 10));
    expect(await journalIds()).toEqual([refs[10]?.id]);
    const after = await store.load(0, HORIZON_MS);
    expect(after.journal).toEqual(refs.slice(10));
    expect(after.nextSeq).toBe(12);
    // Covered by the watermark now: the remaining entry's usage is not counted again.
    expect(after.deltas).toEqual([]);
    await store.snapshot([], 11, refs.slice(10));
    expect(await journalIds()).toEqual([]);
  });

  it("reads and trims entries written with a numeric _id and an array of event ids", async () => {
    const store = await UsageStore.open(connection);
    const accountId = uniqueId("acc");
    const seq = 50;
    await connection.collection("consumption_journal").insertOne({
      _id: seq as never,
      created_at: new Date(NOW),
      event_ids: ["old-1", "old-2"],
      deltas: [
        {
          ...deltaOf(accountId, 7).key,
          tokens_input: 7,
          tokens_output: 0,
          cost_nanos: 0,
          tool_calls: 0,
          requests: 1,
          at: new Date(NOW),
        },
      ],
    });
    const next = await store.append(seq + 1, ["new-1"], [deltaOf(accountId, 5)], NOW + 1);

    const loaded = await store.load(0, HORIZON_MS);
    expect(loaded.journal).toEqual([{ id: seq, seq, at: NOW }, next]);
    expect(loaded.recentEventIds).toEqual(["old-1", "old-2", "new-1"]);
    expect(loaded.nextSeq).toBe(seq + 2);

    await store.snapshot([], seq + 1, loaded.journal);
    expect(await journalIds()).toEqual([]);
  });
});
