import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestApi } from "@agentnet/api-gateway/testing";
import { type NatsConnection, request, useBusMetrics } from "@agentnet/bus";
import { openWarehouse } from "@agentnet/clickhouse";
import { type ConsumptionOptions, startConsumption } from "@agentnet/consumption/app";
import {
  type Caller,
  ControlPlane,
  Events,
  type GatewayRequestEvent,
  type Provider,
} from "@agentnet/contracts";
import { startControlPlane } from "@agentnet/control-plane/app";
import { type NotifierOptions, startNotifier } from "@agentnet/control-plane/notifier";
import { type GatewayProxyOptions, startGatewayProxy } from "@agentnet/gateway-proxy/app";
import { startVerifier, type VerifierOptions } from "@agentnet/provider-verifier/app";
import { parseSealingKeys } from "@agentnet/sealing";
import { createLogger, hashToken } from "@agentnet/service-kit";
import { startTelemetry, type TelemetryOptions } from "@agentnet/telemetry/app";
import { connectTestBus, connectTestMongo, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";
import { serveStackMetrics } from "./metrics";
import { StackTracing } from "./tracing/services";
import { FakeUpstream } from "./upstream";

export type Api = <T = unknown>(
  method: string,
  path: string,
  token: string,
  body?: unknown,
) => Promise<{ status: number; body: T }>;

/** A call to the `/api` of the api-gateway at `apiUrl`, as `token`: its status and its JSON body. */
export async function callApi<T = unknown>(
  apiUrl: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${apiUrl}/api${path}`, {
    method,
    headers: {
      authorization: `Token ${token}`,
      "content-type": "application/json",
      accept: "application/json",
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

export interface StackOptions {
  /**
   * A database of the stack's own instead of the run's shared one, dropped when it stops: for a
   * test whose documents are so large that every other file's queries (FerretDB scans its
   * collections) would slow down behind them.
   */
  database?: string;
  /** Options of the gateway proxy (its port is always picked by the system). */
  proxy?: Partial<GatewayProxyOptions>;
  consumption?: Partial<ConsumptionOptions>;
  /** Options of the provider-verifier, e.g. the test's own token endpoints (`tokenEndpoints`). */
  verifier?: VerifierOptions;
  /** Telemetry on chDB in a temp dir, for tests that read logs, sessions or usage back. */
  telemetry?: boolean | Partial<TelemetryOptions>;
  /** A built dashboard for the api-gateway to serve at `/`. */
  dashboardDir?: string;
  /** Metrics of the proxy, the api-gateway, telemetry and consumption, each served on a listener of its own (`metricsUrls`). */
  metrics?: boolean;
  /** Alerts delivered by webhook from the control-plane; a receiver on loopback must be allowed. */
  notifier?: Partial<NotifierOptions>;
  /** An OTLP/HTTP URL: each service exports its spans there under its own name (see `StackTracing`). */
  tracesUrl?: string;
  /** How long proxy tokens minted for agent credentials live (the control-plane's 15 minutes unless set). */
  agentTokenTtlMs?: number;
}

/**
 * The whole stack for integration tests: the real control-plane, provider-verifier, consumption,
 * api-gateway, gateway proxy and (on request) telemetry in this process, over this test file's own
 * authenticated NATS and the MongoDB-wire test backend, plus fake OpenAI and Anthropic upstreams.
 * Accounts are fresh per test.
 */
export async function startStack(stackOptions: StackOptions = {}) {
  const { proxy: options = {}, dashboardDir } = stackOptions;
  const logger = createLogger("stack-test", "silent");
  // The test drives the bus as an operator; each service joins as itself, with its own permissions.
  const nc = await connectTestBus("stack-test");
  const tracing = stackOptions.tracesUrl ? new StackTracing(stackOptions.tracesUrl) : undefined;
  const serviceBus = async (service: string) => {
    const bus = await connectTestBus(service);
    return tracing ? tracing.use(bus, service) : bus;
  };
  const buses = {
    controlPlane: await serviceBus("control-plane"),
    verifier: await serviceBus("provider-verifier"),
    telemetry: await serviceBus("telemetry"),
    api: await serviceBus("api-gateway"),
    proxy: await serviceBus("gateway-proxy"),
  };
  const connection = await connectTestMongo(stackOptions.database);
  const metrics = stackOptions.metrics ? await serveStackMetrics(buses) : undefined;
  const sealingKey = parseSealingKeys(TEST_SEALING_KEY);
  const controlPlane = await startControlPlane({
    nc: buses.controlPlane,
    connection,
    logger,
    sealingKey,
    verifyTimeoutMs: 5_000,
    ...(stackOptions.agentTokenTtlMs ? { agentTokenTtlMs: stackOptions.agentTokenTtlMs } : {}),
  });
  const notifier = stackOptions.notifier
    ? await startNotifier(controlPlane, stackOptions.notifier)
    : undefined;
  const verifier = await startVerifier({
    nc: buses.verifier,
    logger,
    options: { timeoutMs: 2_000, ...stackOptions.verifier },
  });
  const consumptionOptions: Partial<ConsumptionOptions> = {
    durable: uniqueId("consumption"),
    deliverNew: true,
    pruneIntervalMs: 0,
    ...stackOptions.consumption,
  };
  // Its own NATS connection, so a test can kill it (no snapshot, no hand-over) as a crash would.
  let consumptionBus = await serviceBus("consumption");
  useBusMetrics(consumptionBus, metrics?.consumption.registry);
  // Measured until restarted: a restarted consumption would register its metrics a second time.
  let consumption = await startConsumption({
    nc: consumptionBus,
    connection,
    logger,
    metrics: metrics?.consumption.registry,
    options: consumptionOptions,
  });
  /** Kills the control-plane as a crash would: its connection drops and nobody answers `agn.ctl.*`. */
  const crashControlPlane = () => buses.controlPlane.close();
  /** Kills consumption: its connection drops, its leadership and leases lapse on their own. */
  const crashConsumption = () => consumptionBus.close();
  /** Starts consumption again on the same durable, as a restarted process would. */
  const restartConsumption = async () => {
    consumptionBus = await serviceBus("consumption");
    consumption = await startConsumption({
      nc: consumptionBus,
      connection,
      logger,
      options: consumptionOptions,
    });
  };
  // Telemetry (chDB in a temp dir) only where a test reads logs, sessions or usage back.
  const warehouseDir = stackOptions.telemetry ? mkdtempSync(join(tmpdir(), "agn-stack-")) : undefined;
  const warehouse = warehouseDir
    ? await openWarehouse({ dataDir: warehouseDir, database: "agentnet" })
    : undefined;
  const telemetry = warehouse
    ? await startTelemetry({
        nc: buses.telemetry,
        warehouse,
        logger,
        metrics: metrics?.telemetry.registry,
        options: {
          durable: uniqueId("telemetry"),
          deliver: "new",
          flushIntervalMs: 50,
          retentionIntervalMs: 0,
          settingsCacheMs: 0,
          ...(typeof stackOptions.telemetry === "object" ? stackOptions.telemetry : {}),
        },
      })
    : undefined;
  const apiServer = await startTestApi({
    nc: buses.api,
    logger,
    bodyLimitBytes: 1_000_000,
    dashboardDir,
    metrics: metrics?.api.registry,
  });
  const apiUrl = apiServer.url;
  const openai = new FakeUpstream();
  const anthropic = new FakeUpstream();
  const openaiUrl = await openai.start();
  const anthropicUrl = await anthropic.start();
  // The fake vendors listen on loopback, which the proxy refuses unless allowed: allowed by
  // address and port, so every other loopback upstream is still refused.
  const vendorUpstreams = [openaiUrl, anthropicUrl].map((url) => new URL(url).host);
  const proxy = await startGatewayProxy({
    nc: buses.proxy,
    logger,
    sealingKey,
    metrics: metrics?.proxy.registry,
    options: {
      port: 0,
      authCacheMs: 0,
      ...options,
      allowedPrivateUpstreams: [...vendorUpstreams, ...(options.allowedPrivateUpstreams ?? [])],
    },
  });

  const api: Api = (method, path, token, body) => callApi(apiUrl, method, path, token, body);

  /** A fresh account configured through the API: settings, one OpenAI and one Anthropic provider. */
  const newAccount = async (settings: Record<string, unknown> = {}) => {
    const boot = await request(nc, ControlPlane.accountsBootstrap, {
      email: `${uniqueId("owner")}@example.com`,
    });
    const owner: Caller = await request(nc, ControlPlane.authResolve, { token_hash: hashToken(boot.token) });
    const token = boot.token;
    const must = async <T>(call: Promise<{ status: number; body: T }>): Promise<T> => {
      const result = await call;
      if (result.status >= 300)
        throw new Error(`setup call failed: ${result.status} ${JSON.stringify(result.body)}`);
      return result.body;
    };
    const created = await must(
      api<{ endpoint: string }>("POST", "/agent-network/settings", token, {
        proxy_address: "gw.example.com",
        ...settings,
      }),
    );
    const openaiProvider = await must(
      api<Provider>("POST", "/agent-network/providers", token, {
        provider_id: "openai_api",
        name: "OpenAI",
        upstream_url: `${openaiUrl}/v1`,
        api_key: "sk-upstream-openai",
        identity_header_user_id: "X-Caller",
        identity_header_groups: "X-Caller-Groups",
      }),
    );
    const anthropicProvider = await must(
      api<Provider>("POST", "/agent-network/providers", token, {
        provider_id: "anthropic_api",
        name: "Claude",
        upstream_url: anthropicUrl,
        api_key: "sk-ant-upstream",
      }),
    );
    const events = collectEvents(nc, owner.account_id);
    return { owner, token, endpoint: created.endpoint, openaiProvider, anthropicProvider, events, must };
  };

  const stop = async () => {
    await proxy.stop();
    await notifier?.stop();
    await telemetry?.stop();
    await warehouse?.close();
    if (warehouseDir) rmSync(warehouseDir, { recursive: true, force: true });
    await consumption.stop();
    if (!consumptionBus.isClosed()) await consumptionBus.drain();
    await verifier.stop();
    await apiServer.stop();
    await openai.stop();
    await anthropic.stop();
    await metrics?.stop();
    for (const bus of Object.values(buses)) if (!bus.isClosed()) await bus.drain();
    await nc.drain();
    if (stackOptions.database) await connection.dropDatabase();
    await connection.close();
    await tracing?.shutdown();
  };

  return {
    nc,
    api,
    apiUrl,
    proxy,
    openaiUrl,
    anthropicUrl,
    /** The fake vendors as `AGN_ALLOWED_PRIVATE_UPSTREAMS` entries, for proxies started apart. */
    vendorUpstreams,
    crashControlPlane,
    /** The control-plane's handler context: its stores and its rendered snapshots. */
    controlPlane,
    openai,
    anthropic,
    get consumption() {
      return consumption;
    },
    crashConsumption,
    restartConsumption,
    telemetry,
    warehouse,
    /** Set with `tracesUrl`: `flush()` exports every span ended so far. */
    tracing,
    /** Set with `metrics`: where each service's `/metrics` answers. */
    metricsUrls: metrics?.urls,
    newAccount,
    stop,
  };
}

export type Stack = Awaited<ReturnType<typeof startStack>>;

/** Every request event of one account as the proxy publishes it (a core subscription sees JetStream subjects too). */
export function collectEvents(nc: NatsConnection, accountId: string) {
  const events: GatewayRequestEvent[] = [];
  nc.subscribe(Events.requests(accountId), {
    callback: (error, msg) => {
      if (!error) events.push(msg.json<GatewayRequestEvent>());
    },
  });
  /** Waits until `count` events arrived (they are published after the answer, asynchronously). */
  const waitFor = async (count: number, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (events.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} events, got ${events.length}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return events;
  };
  return { events, waitFor };
}
