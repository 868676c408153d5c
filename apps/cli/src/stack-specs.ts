import { join } from "node:path";
import type { BusCredentials } from "@agentnet/local-backends";
import type { CliEnv } from "./env";
import type { ServiceSpec } from "./services";
import type { StackEndpoint } from "./stack-file";
import {
  CLUSTER_NATS_NODES,
  replicaCount,
  replicaName,
  replicaPorts,
  type ServiceApp,
  type Topology,
} from "./topology";

/** The ports every replica of the API and of the proxy listens on: from AGN_API_PORT and AGN_PROXY_PORT up. */
export interface EdgePorts {
  api: number[];
  proxy: number[];
}

export function edgePorts(env: CliEnv, topology: Topology): EdgePorts {
  const count = (app: ServiceApp) => replicaCount(app, topology, env.CLICKHOUSE_URL !== undefined);
  const api = replicaPorts(
    env.AGN_API_PORT,
    count("api-gateway"),
    new Set([env.AGN_PROXY_PORT, env.AGN_DEMO_UPSTREAM_PORT]),
  );
  const proxy = replicaPorts(
    env.AGN_PROXY_PORT,
    count("gateway-proxy"),
    new Set([env.AGN_DEMO_UPSTREAM_PORT, ...api]),
  );
  return { api, proxy };
}

export interface StackPlan {
  env: CliEnv;
  topology: Topology;
  /** The stack's NATS servers: one, or the cluster's nodes. */
  natsUrls: string[];
  credentials: BusCredentials;
  mongoUrl: string;
  sealingKey: string;
  dataDir: string;
  dashboardDir: string | undefined;
  ports: EdgePorts;
  /** The request stream's byte limit per copy (AGN_REQUESTS_STREAM_MAX_BYTES). */
  requestStreamMaxBytes: number;
}

/**
 * Every process `up` starts, replicas included, in the order their readiness is awaited: each
 * joins the bus as its service with only its own subjects (busPermissions). On a cluster,
 * every replica lists every node (the bus connects to one at random, so replicas spread over the
 * nodes, and fails over to the others), and streams and buckets are kept on three nodes.
 */
/** The Node flags of the services whose short-lived objects outlive V8's default young generation. */
const YOUNG_GENERATION_64_MIB = ["--max-semi-space-size=64"];

export function serviceSpecs(plan: StackPlan): ServiceSpec[] {
  const { env, topology, natsUrls, credentials } = plan;
  const clickhouse = env.CLICKHOUSE_URL !== undefined;
  const replicas = (
    app: ServiceApp,
    spec: (index: number, busEnv: Record<string, string>) => Omit<ServiceSpec, "name" | "app">,
  ) => {
    const count = replicaCount(app, topology, clickhouse);
    return Array.from({ length: count }, (_, index): ServiceSpec => {
      const busEnv = {
        NATS_URL: natsUrls.join(","),
        NATS_USER: app,
        NATS_PASSWORD: credentials[app],
        LOG_LEVEL: env.LOG_LEVEL,
        AGN_REQUESTS_STREAM_MAX_BYTES: String(plan.requestStreamMaxBytes),
        // A copy of every stream and bucket on each node: any one node may be lost.
        ...(topology === "cluster" ? { AGN_STREAM_REPLICAS: String(CLUSTER_NATS_NODES) } : {}),
      };
      return { name: replicaName(app, index, count), app, ...spec(index, busEnv) };
    });
  };
  const onBus = (busEnv: Record<string, string>) => `nats ${busEnv.NATS_URL}`;
  const chdbDir = join(plan.dataDir, "chdb");
  const telemetryAddress = clickhouse
    ? `clickhouse ${env.CLICKHOUSE_URL}`
    : topology === "cluster"
      ? `chdb ${chdbDir} (one instance: chDB's files belong to one process; several telemetry instances need CLICKHOUSE_URL)`
      : `chdb ${chdbDir}`;
  return [
    ...replicas("control-plane", (_, busEnv) => ({
      env: { ...busEnv, MONGO_URL: plan.mongoUrl, AGN_SEALING_KEY: plan.sealingKey },
      address: onBus(busEnv),
    })),
    ...replicas("provider-verifier", (_, busEnv) => ({ env: busEnv, address: onBus(busEnv) })),
    ...replicas("telemetry", (_, busEnv) => ({
      // A batch's events outlive V8's default 16 MiB young generation; see apps/telemetry/README.md.
      nodeArgs: YOUNG_GENERATION_64_MIB,
      env: {
        ...busEnv,
        AGN_DATA_DIR: plan.dataDir,
        ...(env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: env.CLICKHOUSE_URL } : {}),
      },
      address: telemetryAddress,
    })),
    ...replicas("consumption", (_, busEnv) => ({
      // Settled batches outlive V8's default 16 MiB young generation; see apps/consumption/README.md.
      nodeArgs: YOUNG_GENERATION_64_MIB,
      env: { ...busEnv, MONGO_URL: plan.mongoUrl },
      address: onBus(busEnv),
    })),
    ...replicas("gateway-proxy", (index, busEnv) => ({
      // Requests in flight outlive V8's default 16 MiB young generation; see apps/gateway-proxy/README.md.
      nodeArgs: YOUNG_GENERATION_64_MIB,
      env: {
        ...busEnv,
        AGN_SEALING_KEY: plan.sealingKey,
        AGN_PROXY_HOST: env.AGN_API_HOST,
        AGN_PROXY_PORT: String(plan.ports.proxy[index]),
        ...(env.AGN_PROXY_WORKERS ? { AGN_PROXY_WORKERS: String(env.AGN_PROXY_WORKERS) } : {}),
        // The demo upstream listens on loopback, which the proxy refuses unless allowed: allowed
        // by address and port, besides what the operator allows.
        AGN_ALLOWED_PRIVATE_UPSTREAMS: [
          `127.0.0.1:${env.AGN_DEMO_UPSTREAM_PORT}`,
          env.AGN_ALLOWED_PRIVATE_UPSTREAMS,
        ]
          .filter((entry) => entry !== "")
          .join(","),
      },
      ...listeningAt("gateway-proxy", `http://${env.AGN_API_HOST}:${plan.ports.proxy[index]}`),
    })),
    ...replicas("api-gateway", (index, busEnv) => ({
      env: {
        ...busEnv,
        AGN_API_HOST: env.AGN_API_HOST,
        AGN_API_PORT: String(plan.ports.api[index]),
        AGN_DASHBOARD_DIR: plan.dashboardDir ?? "",
      },
      ...listeningAt("api-gateway", `http://${env.AGN_API_HOST}:${plan.ports.api[index]}`),
    })),
    {
      name: "demo-upstream",
      app: "cli",
      entry: join("src", "demo-upstream.ts"),
      env: { AGN_DEMO_UPSTREAM_PORT: String(env.AGN_DEMO_UPSTREAM_PORT) },
      ...listeningAt(
        "demo-upstream",
        `http://127.0.0.1:${env.AGN_DEMO_UPSTREAM_PORT}`,
        " (OpenAI and Anthropic formats, canned answers, for quickstart)",
      ),
    },
  ];
}

/** A service that listens at `url`: printed once ready (with `note`), and probed by `agentnet status`. */
const listeningAt = (kind: NonNullable<ServiceSpec["listens"]>["kind"], url: string, note = "") => ({
  address: `${url}${note}`,
  listens: { kind, url },
});

/** What `agentnet status` probes: every replica of the API and the proxy, and the demo upstream. */
export function serviceEndpoints(specs: ServiceSpec[]): StackEndpoint[] {
  const order = ["api-gateway", "gateway-proxy", "demo-upstream"];
  return specs
    .flatMap((spec) => (spec.listens ? [{ name: spec.name, ...spec.listens }] : []))
    .sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}
