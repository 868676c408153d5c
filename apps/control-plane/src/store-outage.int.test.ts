import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NatsConnection, request } from "@agentnet/bus";
import { AppError, ControlPlane } from "@agentnet/contracts";
import { type Backend, freePort, startMongo } from "@agentnet/local-backends";
import { parseSealingKeys } from "@agentnet/sealing";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus, TEST_SEALING_KEY } from "@agentnet/testkit";
import mongoose from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MONGO_CONNECTION_OPTIONS, startControlPlane } from "./app";

describe("the control-plane when MongoDB goes away", () => {
  let mongo: Backend;
  let dataDir: string;
  let connection: mongoose.Connection;
  let controlPlane: NatsConnection;
  let operator: NatsConnection;

  beforeAll(async () => {
    // A MongoDB-wire server of this test alone: it is stopped mid-test.
    dataDir = mkdtempSync(join(tmpdir(), "agn-store-outage-"));
    mongo = await startMongo({ url: `mongodb://127.0.0.1:${await freePort()}/agentnet`, dataDir });
    connection = await mongoose.createConnection(mongo.url, MONGO_CONNECTION_OPTIONS).asPromise();
    controlPlane = await connectTestBus("control-plane");
    operator = await connectTestBus();
    await startControlPlane({
      nc: controlPlane,
      connection,
      logger: createLogger("t", "silent"),
      sealingKey: parseSealingKeys(TEST_SEALING_KEY),
    });
  }, 60_000);

  afterAll(async () => {
    await controlPlane.close();
    await operator.close();
    await connection.close().catch(() => undefined);
    await mongo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers 503 store.unavailable within a few seconds, not a 500 or a timeout", async () => {
    const boot = await request(operator, ControlPlane.accountsBootstrap, { email: "outage@example.com" });
    const caller = {
      account_id: boot.account_id,
      user_id: boot.user_id,
      role: "owner" as const,
      group_ids: [],
      email: "outage@example.com",
      name: "o",
    };
    await expect(request(operator, ControlPlane.groupsList, { caller })).resolves.toHaveLength(1);

    await mongo.stop();
    const started = Date.now();
    const error = await request(operator, ControlPlane.groupsList, { caller }, { timeoutMs: 15_000 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 503, code: "store.unavailable" });
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 30_000);
});
