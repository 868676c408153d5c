import { generateSealingKey, parseSealingKeys } from "@agentnet/sealing";
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
    await expect(verifySealingKey(models, parseSealingKeys(TEST_SEALING_KEY))).resolves.toBeUndefined();
  });

  it("refuses another key with a message naming both keys", async () => {
    const models = await createAgentModels(connection);
    const wrong = parseSealingKeys(generateSealingKey());
    await expect(verifySealingKey(models, wrong)).rejects.toThrow(
      new RegExp(
        `keys ${wrong.current.kid}.*sealed with key ${parseSealingKeys(TEST_SEALING_KEY).current.kid}`,
      ),
    );
  });

  it("seals a canary on first start of an empty database", async () => {
    const fresh = connection.useDb(uniqueId("fresh"));
    const models = await createAgentModels(fresh);
    const key = parseSealingKeys(generateSealingKey());
    await verifySealingKey(models, key);
    expect((await models.SealingCanary.findById("sealing-key").lean())?.sealed.kid).toBe(key.current.kid);
    await fresh.dropDatabase();
  });
});
