import { type NatsConnection, request } from "@agentnet/bus";
import { ControlPlane } from "@agentnet/contracts";
import { parseSealingKeys } from "@agentnet/sealing";
import { createLogger, hashToken } from "@agentnet/service-kit";
import { connectRecordingMongo, connectTestBus, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MONGO_CONNECTION_OPTIONS, startControlPlane } from "./app";

describe("the control-plane's MongoDB consistency", () => {
  let mongo: Awaited<ReturnType<typeof connectRecordingMongo>>;
  let controlPlane: NatsConnection;
  let operator: NatsConnection;

  beforeAll(async () => {
    // A MONGO_URL asking for less, which the code's options must win over.
    mongo = await connectRecordingMongo(MONGO_CONNECTION_OPTIONS, {
      w: "1",
      journal: "false",
      readConcernLevel: "local",
      readPreference: "secondaryPreferred",
    });
    controlPlane = await connectTestBus("control-plane");
    operator = await connectTestBus();
    await startControlPlane({
      nc: controlPlane,
      connection: mongo.connection,
      logger: createLogger("t", "silent"),
      sealingKey: parseSealingKeys(TEST_SEALING_KEY),
    });
  });

  afterAll(async () => {
    await controlPlane.close();
    await operator.close();
    await mongo.connection.close();
  });

  it("reads from the primary with majority read concern and writes with majority, journaled, whatever the URL says", () => {
    const { connection } = mongo;
    expect(connection.getClient().readPreference.mode).toBe("primary");
    expect(connection.db?.readConcern?.level).toBe("majority");
    expect(connection.db?.writeConcern).toMatchObject({ w: "majority", journal: true });
  });

  it("sends a token's issue, resolution and revocation with those concerns, and the server takes them", async () => {
    mongo.clear();
    const boot = await request(operator, ControlPlane.accountsBootstrap, {
      email: `${uniqueId("concern")}@example.com`,
    });
    const caller = await request(operator, ControlPlane.authResolve, { token_hash: hashToken(boot.token) });
    expect(caller.account_id).toBe(boot.account_id);
    const [issued] = await request(operator, ControlPlane.tokensList, { caller, user_id: boot.user_id });
    if (issued === undefined) throw new Error("bootstrap issued no token");
    await request(operator, ControlPlane.tokensDelete, {
      caller,
      user_id: boot.user_id,
      token_id: issued.id,
    });
    await expect(
      request(operator, ControlPlane.authResolve, { token_hash: hashToken(boot.token) }),
    ).rejects.toMatchObject({ status: 401 });

    expect(mongo.writes().length).toBeGreaterThan(0);
    expect(mongo.reads().length).toBeGreaterThan(0);
    for (const { name, command } of mongo.writes()) {
      expect(command.writeConcern, name).toEqual({ w: "majority", j: true });
    }
    for (const { name, command } of mongo.reads()) {
      expect(command.readConcern, name).toEqual({ level: "majority" });
    }
  });
});
