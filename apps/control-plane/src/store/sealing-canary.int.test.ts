import { generateSealingKey, parseSealingKey } from "@agentnet/sealing";
import { connectTestMongo, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";
import type { Connection } from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentModels } from "./agent-models";
import { verifySealingKey } from "./sealing-canary";

let connection: Connection;
beforeAll(async () => {
  connection = await connectTestMongo();
});
afterAll(async () => {
  await connection.close();
});

describe("the sealing key check at start", () => {
  it("accepts the key the database's credentials were sealed with", async () => {
    const models = await createAgentModels(connection);
    await expect(verifySealingKey(models, parseSealingKey(TEST_SEALING_KEY))).resolves.toBeUndefined();
  });

  it("refuses another key with a message naming both keys", async () => {
    const models = await createAgentModels(connection);
    const wrong = parseSealingKey(generateSealingKey());
    await expect(verifySealingKey(models, wrong)).rejects.toThrow(
      new RegExp(`key ${wrong.kid}.*sealed with key ${parseSealingKey(TEST_SEALING_KEY).kid}`),
    );
  });

  it("seals a canary on first start of an empty database", async () => {
    const fresh = connection.useDb(uniqueId("fresh"));
    const models = await createAgentModels(fresh);
    const key = parseSealingKey(generateSealingKey());
    await verifySealingKey(models, key);
    expect((await models.SealingCanary.findById("sealing-key").lean())?.sealed.kid).toBe(key.kid);
    await fresh.dropDatabase();
  });
});
