import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestApi } from "@agentnet/api-gateway/testing";
import { deleteDurableConsumer, publishEvent, request } from "@agentnet/bus";
import { openWarehouse } from "@agentnet/clickhouse";
import {
  type Caller,
  ControlPlane,
  Events,
  type GatewayRequestEvent,
  type RequestOf,
  type Role,
  Telemetry,
} from "@agentnet/contracts";
import { startControlPlane } from "@agentnet/control-plane/app";
import { parseSealingKeys } from "@agentnet/sealing";
import { createLogger, hashToken } from "@agentnet/service-kit";
import { connectTestBus, connectTestMongo, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";
import { startTelemetry } from "./app";
import { makeEvent } from "./test-events";

/**
 * The real control-plane, telemetry (chDB in a temp dir, its own durable consumer) and the
 * api-gateway in this process, over the test NATS and MongoDB. Accounts are fresh per test.
 */
export async function startTelemetryStack() {
  const logger = createLogger("telemetry-test", "silent");
  const nc = await connectTestBus("telemetry-test");
  const connection = await connectTestMongo();
  await startControlPlane({ nc, connection, logger, sealingKey: parseSealingKeys(TEST_SEALING_KEY) });
  const dataDir = mkdtempSync(join(tmpdir(), "agn-telemetry-"));
  const warehouse = await openWarehouse({ dataDir, database: "agentnet" });
  const durable = uniqueId("telemetry-test");
  const telemetry = await startTelemetry({
    nc,
    warehouse,
    logger,
    // "new": the shared stream holds other suites' events; this suite reads from its start on.
    options: {
      durable,
      deliver: "new",
      flushIntervalMs: 50,
      retentionIntervalMs: 0,
      rollupIntervalMs: 0,
      settingsCacheMs: 0,
    },
  });
  const api = await startTestApi({ nc, logger, bodyLimitBytes: 65_536, requestTimeoutMs: 5_000 });
  const baseUrl = api.url;

  const resolve = (token: string) => request(nc, ControlPlane.authResolve, { token_hash: hashToken(token) });

  /** A fresh account and its owner (as the gateway would resolve them). */
  const newAccount = async () => {
    const boot = await request(nc, ControlPlane.accountsBootstrap, {
      email: `${uniqueId("owner")}@example.com`,
    });
    return { accountId: boot.account_id, owner: await resolve(boot.token), token: boot.token };
  };

  /** A member of the owner's account with a role and a token of their own. */
  const addMember = async (owner: Caller, role: Role, name = "Member") => {
    const user = await request(nc, ControlPlane.usersCreate, {
      caller: owner,
      body: { email: `${uniqueId("m")}@example.com`, name, role },
    });
    const token = await request(nc, ControlPlane.tokensCreate, {
      caller: owner,
      user_id: user.id,
      body: { name: "test", expires_in: 1 },
    });
    return { caller: await resolve(token.plain_token), token: token.plain_token };
  };

  const configure = (
    owner: Caller,
    body: { enable_log_collection?: boolean; access_log_retention_days?: number },
  ) =>
    request(nc, ControlPlane.settingsCreate, {
      caller: owner,
      body: { proxy_address: "proxy.example.com", ...body },
    });

  const publish = async (events: GatewayRequestEvent[], msgId = (e: GatewayRequestEvent) => e.id) => {
    for (const event of events)
      await publishEvent(nc, Events.requests(event.account_id), event, msgId(event));
  };

  /**
   * Publishes a marker event after everything else and waits until it is stored: the consumer
   * delivers in stream order and batches are written one after another, so all earlier events
   * are written (or terminated) by then.
   */
  const settle = async () => {
    const marker = makeEvent({ account_id: uniqueId("marker") });
    await publish([marker]);
    const deadline = Date.now() + 15_000;
    const stored = () =>
      warehouse.query("SELECT id FROM usage_events WHERE account_id = {a:String}", { a: marker.account_id });
    while ((await stored()).length === 0) {
      if (Date.now() > deadline) throw new Error("telemetry did not ingest the marker event within 15 s");
      await new Promise((done) => setTimeout(done, 50));
    }
  };

  const accessLogs = (caller: Caller, query: RequestOf<typeof Telemetry.accessLogs>["query"] = {}) =>
    request(nc, Telemetry.accessLogs, { caller, query });
  const sessions = (caller: Caller, query: RequestOf<typeof Telemetry.sessions>["query"] = {}) =>
    request(nc, Telemetry.sessions, { caller, query });
  const usage = (caller: Caller, query: RequestOf<typeof Telemetry.usageOverview>["query"] = {}) =>
    request(nc, Telemetry.usageOverview, { caller, query });

  const http = async <T = unknown>(path: string, token: string) => {
    const response = await fetch(`${baseUrl}${path}`, {
      headers: { accept: "application/json", authorization: `Token ${token}` },
    });
    return { status: response.status, body: (await response.json()) as T };
  };

  const stop = async () => {
    await api.stop();
    await telemetry.stop();
    await deleteDurableConsumer(nc, durable);
    await nc.drain();
    await warehouse.close();
    await connection.close();
    rmSync(dataDir, { recursive: true, force: true });
  };

  return {
    nc,
    warehouse,
    telemetry,
    newAccount,
    addMember,
    configure,
    publish,
    settle,
    accessLogs,
    sessions,
    usage,
    http,
    stop,
  };
}

export type TelemetryStack = Awaited<ReturnType<typeof startTelemetryStack>>;
