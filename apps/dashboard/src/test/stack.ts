import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startTestApi } from "@agentnet/api-gateway/testing";
import { request } from "@agentnet/bus";
import { openWarehouse } from "@agentnet/clickhouse";
import { startConsumption } from "@agentnet/consumption/app";
import { ControlPlane } from "@agentnet/contracts";
import { startControlPlane } from "@agentnet/control-plane/app";
import { startGatewayProxy } from "@agentnet/gateway-proxy/app";
import { startVerifier } from "@agentnet/provider-verifier/app";
import { parseSealingKeys } from "@agentnet/sealing";
import { createLogger } from "@agentnet/service-kit";
import { startTelemetry } from "@agentnet/telemetry/app";
import { connectTestBus, connectTestMongo, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";
import { build } from "vite";
import { FakeOpenAI } from "./fake-upstream";

const DASHBOARD_ROOT = resolve(import.meta.dirname, "../..");

/** Builds the dashboard with its own vite config into a temp dir (what the gateway serves). */
export async function buildDashboard(outDir: string): Promise<void> {
  await build({
    configFile: join(DASHBOARD_ROOT, "vite.config.ts"),
    root: DASHBOARD_ROOT,
    logLevel: "warn",
    build: { outDir, emptyOutDir: true },
  });
}

/**
 * Every service the dashboard reads, in this process, over this file's own NATS and the test
 * MongoDB: control-plane, provider-verifier, telemetry (chDB in a temp dir), consumption, the
 * gateway proxy with a fake OpenAI upstream, and the api-gateway serving the built dashboard.
 */
export async function startDashboardStack() {
  const logger = createLogger("dashboard-test", "silent");
  const tmp = mkdtempSync(join(tmpdir(), "agn-dashboard-"));
  const dashboardDir = join(tmp, "dist");
  await buildDashboard(dashboardDir);

  const nc = await connectTestBus("dashboard-test");
  const connection = await connectTestMongo();
  const sealingKey = parseSealingKeys(TEST_SEALING_KEY);
  await startControlPlane({ nc, connection, logger, sealingKey, verifyTimeoutMs: 5_000 });
  const verifier = await startVerifier({ nc, logger, options: { timeoutMs: 2_000 } });
  const warehouse = await openWarehouse({ dataDir: join(tmp, "chdb"), database: "agentnet" });
  const telemetry = await startTelemetry({
    nc,
    warehouse,
    logger,
    options: {
      durable: uniqueId("telemetry"),
      deliver: "new",
      flushIntervalMs: 50,
      retentionIntervalMs: 0,
      settingsCacheMs: 0,
    },
  });
  const consumption = await startConsumption({
    nc,
    connection,
    logger,
    options: { durable: uniqueId("consumption"), deliverNew: true, sweepIntervalMs: 0, pruneIntervalMs: 0 },
  });
  const proxy = await startGatewayProxy({
    nc,
    logger,
    sealingKey,
    options: { port: 0, authCacheMs: 0, snapshotMaxAgeMs: 500 },
  });
  const upstream = new FakeOpenAI();
  const upstreamUrl = await upstream.start();

  const server = await startTestApi({ nc, logger, bodyLimitBytes: 1_000_000, dashboardDir });
  const baseUrl = server.url;

  const api = async <T>(method: string, path: string, token: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        accept: "application/json",
        authorization: `Token ${token}`,
        "content-type": "application/json",
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };

  const bootstrap = () =>
    request(nc, ControlPlane.accountsBootstrap, {
      email: `${uniqueId("owner")}@example.com`,
      name: "Olivia Owner",
    });

  /** A regular member of the owner's account and a token of theirs. */
  const addMember = async (ownerToken: string, name: string) => {
    const user = await api<{ id: string }>("POST", "/api/users", ownerToken, {
      email: `${uniqueId("m")}@example.com`,
      name,
      role: "user",
    });
    const token = await api<{ plain_token: string }>("POST", `/api/users/${user.id}/tokens`, ownerToken, {
      name: "dashboard-test",
      expires_in: 1,
    });
    return { id: user.id, token: token.plain_token };
  };

  /** One chat completion through the gateway proxy, as an SDK would send it. */
  const chat = async (
    token: string,
    options: { session?: string; model?: string; maxTokens?: number } = {},
  ) => {
    const response = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(options.session ? { "x-session-id": options.session } : {}),
      },
      body: JSON.stringify({
        model: options.model ?? "gpt-4o-mini",
        messages: [{ role: "user", content: "Summarise the release notes in one line." }],
        // The proxy reserves prompt + max_tokens against caps (4,096 when unset): keep it small.
        max_tokens: options.maxTokens ?? 200,
      }),
    });
    await response.text();
    return response.status;
  };

  /** Polls an API read until `ready` accepts it (telemetry and consumption ingest asynchronously). */
  const waitFor = async <T>(
    read: () => Promise<T>,
    ready: (value: T) => boolean,
    what: string,
    timeoutMs = 20_000,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (ready(value)) return value;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 400)}`);
      await new Promise((done) => setTimeout(done, 200));
    }
  };

  const stop = async () => {
    await server.stop();
    await proxy.stop();
    await consumption.stop();
    await telemetry.stop();
    verifier.stop();
    await upstream.stop();
    await nc.drain();
    await warehouse.close();
    await connection.close();
    rmSync(tmp, { recursive: true, force: true });
  };

  return { baseUrl, upstreamUrl, upstream, api, bootstrap, addMember, chat, waitFor, stop };
}

export type DashboardStack = Awaited<ReturnType<typeof startDashboardStack>>;
