import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BusService } from "@agentnet/contracts";
import {
  type Backend,
  ensureMongo,
  ensureNats,
  findRepoRoot,
  localBusCredentials,
} from "@agentnet/local-backends";
import { busCredentialsFile, localDataDir, recordRunningStack } from "../bus-credentials";
import type { CliEnv } from "../env";
import { localSealingKey } from "../sealing-key";
import { type RunningService, type ServiceSpec, startService, stopService } from "../services";

const pad = (text: string) => text.padEnd(20);

/**
 * `agentnet up`: the local backends it cannot reach, then every service as its own process.
 * Prints one line per part once it is healthy and runs until SIGINT/SIGTERM or until a service
 * dies, then stops everything it started, services first.
 */
export async function up(env: CliEnv, print: (line: string) => void): Promise<number> {
  const root = findRepoRoot();
  const dataDir = localDataDir(env);
  const logDir = join(dataDir, "logs");
  const backends: Backend[] = [];
  const services: RunningService[] = [];
  let stopping = false;

  let forgetStack: (() => void) | undefined;
  const stopAll = async () => {
    stopping = true;
    forgetStack?.();
    await Promise.all(services.map((service) => stopService(service)));
    for (const backend of backends.reverse()) await backend.stop();
  };

  // The stack's data (credentials, sealing key, databases, logs) is its user's alone.
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);

  try {
    const credentials = localBusCredentials(busCredentialsFile(dataDir));
    const nats = await ensureNats({
      url: env.NATS_URL,
      dataDir,
      credentials,
      reuseUnauthenticated: env.AGN_NATS_REUSE_UNAUTHENTICATED,
    });
    backends.push(nats);
    print(
      `${pad("nats")}${nats.url} (${nats.origin === "started" ? `started ${nats.engine}` : "already running"}${nats.note ? `; ${nats.note}` : ""})`,
    );
    const mongo = await ensureMongo({ url: env.MONGO_URL, dataDir });
    backends.push(mongo);
    print(
      `${pad("mongodb")}${mongo.url} (${mongo.origin === "started" ? `started ${mongo.engine}` : "already running"})`,
    );

    const builtDashboard = join(root, "apps", "dashboard", "dist");
    const dashboardDir = existsSync(join(builtDashboard, "index.html")) ? builtDashboard : undefined;
    const sealingKey = localSealingKey(env.AGN_SEALING_KEY, join(dataDir, "sealing.key"));
    const common = { NATS_URL: nats.url, LOG_LEVEL: env.LOG_LEVEL };
    // Each service joins the bus as itself, with only its own subjects (busPermissions).
    const bus = (service: BusService) => ({
      ...common,
      NATS_USER: service,
      NATS_PASSWORD: credentials[service],
    });
    const specs: ServiceSpec[] = [
      {
        name: "control-plane",
        app: "control-plane",
        env: { ...bus("control-plane"), MONGO_URL: mongo.url, AGN_SEALING_KEY: sealingKey },
        address: `nats ${nats.url}`,
      },
      {
        name: "provider-verifier",
        app: "provider-verifier",
        env: bus("provider-verifier"),
        address: `nats ${nats.url}`,
      },
      {
        name: "telemetry",
        app: "telemetry",
        // A batch's events outlive V8's default 16 MiB young generation; see apps/telemetry/README.md.
        nodeArgs: ["--max-semi-space-size=64"],
        env: {
          ...bus("telemetry"),
          AGN_DATA_DIR: dataDir,
          ...(env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: env.CLICKHOUSE_URL } : {}),
        },
        address: env.CLICKHOUSE_URL ? `clickhouse ${env.CLICKHOUSE_URL}` : `chdb ${join(dataDir, "chdb")}`,
      },
      {
        name: "consumption",
        app: "consumption",
        env: { ...bus("consumption"), MONGO_URL: mongo.url },
        address: `nats ${nats.url}`,
      },
      {
        name: "gateway-proxy",
        app: "gateway-proxy",
        env: {
          ...bus("gateway-proxy"),
          AGN_SEALING_KEY: sealingKey,
          AGN_PROXY_HOST: env.AGN_API_HOST,
          AGN_PROXY_PORT: String(env.AGN_PROXY_PORT),
        },
        address: `http://${env.AGN_API_HOST}:${env.AGN_PROXY_PORT}`,
      },
      {
        name: "api-gateway",
        app: "api-gateway",
        env: {
          ...bus("api-gateway"),
          AGN_API_HOST: env.AGN_API_HOST,
          AGN_API_PORT: String(env.AGN_API_PORT),
          AGN_DASHBOARD_DIR: dashboardDir ?? "",
        },
        address: `http://${env.AGN_API_HOST}:${env.AGN_API_PORT}`,
      },
    ];
    for (const spec of specs) services.push(startService(spec, root, logDir));
    for (const service of services) {
      await service.ready;
      print(`${pad(service.spec.name)}${service.spec.address}`);
    }
    print(
      dashboardDir
        ? `${pad("dashboard")}http://${env.AGN_API_HOST}:${env.AGN_API_PORT}/`
        : `${pad("dashboard")}not built: pnpm --filter @agentnet/dashboard build`,
    );
    print(`${pad("logs")}${logDir}`);
    forgetStack = recordRunningStack(dataDir, nats.url);
    print(
      "ready: create an account with `pnpm agentnet bootstrap --email you@example.com`; Ctrl-C stops the stack",
    );
  } catch (error) {
    await stopAll();
    throw error;
  }

  return new Promise<number>((resolve) => {
    const shutdown = (code: number) => {
      if (stopping) return;
      void stopAll().then(() => resolve(code));
    };
    process.once("SIGINT", () => shutdown(0));
    process.once("SIGTERM", () => shutdown(0));
    for (const service of services) {
      void service.exited.then((code) => {
        if (stopping) return;
        print(`${service.spec.name} exited with code ${code}; stopping the stack`);
        shutdown(1);
      });
    }
  });
}
