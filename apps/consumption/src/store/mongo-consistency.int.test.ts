import type { UsageDelta } from "@agentnet/caps";
import { connectRecordingMongo, uniqueId } from "@agentnet/testkit";
import type { Connection } from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MONGO_CONNECTION_OPTIONS } from "../app";
import { UsageStore } from "./usage-store";

const HOUR = 3600;
const NOW = Date.UTC(2031, 0, 1, 10, 0, 0);

describe("consumption's MongoDB consistency", () => {
  let mongo: Awaited<ReturnType<typeof connectRecordingMongo>>;
  let connection: Connection;

  beforeAll(async () => {
    mongo = await connectRecordingMongo(MONGO_CONNECTION_OPTIONS);
    connection = mongo.connection.useDb(uniqueId("agentnet_test_consistency"), { useCache: false });
  });

  afterAll(async () => {
    await connection.dropDatabase();
    await mongo.connection.close();
  });

  it("journals, snapshots and reloads settled usage with majority writes and reads", async () => {
    const store = await UsageStore.open(connection);
    const delta: UsageDelta = {
      key: {
        account_id: uniqueId("acc"),
        dimension_kind: "user",
        dimension_id: "u1",
        window_seconds: HOUR,
        window_start: NOW / 1000 - ((NOW / 1000) % HOUR),
      },
      tokens_input: 40,
      tokens_output: 2,
      cost_nanos: 0,
      tool_calls: 0,
      requests: 1,
      at: NOW,
    };
    mongo.clear();
    const first = await store.append(1, ["e1"], [delta], NOW);
    await store.append(2, ["e2"], [delta], NOW + 1);
    await store.snapshot([], 1, [first]);
    const loaded = await store.load(NOW / 1000 - HOUR, 120_000);

    expect(loaded.journal.map((entry) => entry.seq)).toEqual([2]);
    expect(loaded.deltas.map((entry) => entry.tokens_input)).toEqual([40]);
    expect(mongo.writes().map((entry) => entry.name)).toEqual(
      expect.arrayContaining(["insert", "update", "delete"]),
    );
    for (const { name, command } of mongo.writes()) {
      expect(command.writeConcern, name).toEqual({ w: "majority", j: true });
    }
    expect(mongo.reads().length).toBeGreaterThan(0);
    for (const { name, command } of mongo.reads()) {
      expect(command.readConcern, name).toEqual({ level: "majority" });
    }
  });
});
