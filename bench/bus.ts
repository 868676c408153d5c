/**
 * The benchmarks' NATS: a nats-server of the run's own, on a free port, or a cluster of three on
 * loopback, requiring credentials as every stack does. Services join as themselves (their env from
 * `serviceEnv`); the benchmark drives the bus as an operator. Child scripts connect with
 * `connectFromEnv`.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectBus } from "@agentnet/bus";
import type { BusService } from "@agentnet/contracts";
import { freePort, generateBusCredentials, startNats } from "@agentnet/local-backends";
import { startNatsCluster } from "@agentnet/testkit";
import { connect, type NatsConnection } from "@nats-io/transport-node";

const OPERATOR = "bench-operator";

/** A bus of the run's own, one server or a cluster, as the benchmark and its services use it. */
export interface BenchBus {
  url: string;
  /** The nats-server processes' ids. */
  pids: number[];
  /** The environment a service's process joins with (as the services read it). */
  serviceEnv(service: BusService): Record<string, string>;
  connectAs(service: BusService): Promise<NatsConnection>;
  connectOperator(name: string): Promise<NatsConnection>;
  stop(): Promise<void>;
}

export async function startBenchNats(): Promise<BenchBus> {
  const dataDir = mkdtempSync(join(tmpdir(), "agn-bench-nats-"));
  const credentials = generateBusCredentials();
  const operator = { user: OPERATOR, password: randomBytes(24).toString("base64url") };
  const nats = await startNats({
    host: "127.0.0.1",
    port: await freePort(),
    dataDir,
    credentials,
    operators: [operator],
    // e.g. `curl -o nats.prof 127.0.0.1:<port>/debug/pprof/profile?seconds=10`, then `go tool pprof -top`.
    ...(process.env.BENCH_NATS_PROF_PORT ? { profPort: Number(process.env.BENCH_NATS_PROF_PORT) } : {}),
  });
  return {
    url: nats.url,
    pids: [nats.pid ?? 0],
    serviceEnv: (service: BusService) => ({
      NATS_URL: nats.url,
      NATS_USER: service,
      NATS_PASSWORD: credentials[service],
    }),
    connectAs: (service: BusService) =>
      connectBus({ url: nats.url, service, auth: { user: service, password: credentials[service] } }),
    connectOperator: (name: string): Promise<NatsConnection> =>
      connect({ servers: nats.url, name, user: operator.user, pass: operator.password, noAsyncTraces: true }),
    stop: async () => {
      await nats.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Three nats-server processes on loopback with routes and JetStream (testkit's cluster, its files
 * in a directory of this run), every stream and KV bucket at three replicas: each service is given
 * every node's URL (`NATS_URL`, comma-separated) and `AGN_STREAM_REPLICAS=3`.
 */
export async function startBenchNatsCluster(): Promise<BenchBus> {
  const dir = mkdtempSync(join(tmpdir(), "agn-bench-cluster-"));
  const cluster = await startNatsCluster({ dir });
  return {
    url: cluster.url,
    pids: cluster.nodes.map((node) => node.pid ?? 0),
    serviceEnv: (service) => cluster.serviceEnv(service),
    connectAs: (service) =>
      connectBus({
        url: cluster.url,
        service,
        auth: { user: service, password: cluster.credentials[service] },
        streamReplicas: cluster.replicas,
      }),
    connectOperator: (name) =>
      connect({
        servers: cluster.urls,
        name,
        user: cluster.operator.user,
        pass: cluster.operator.password,
        noAsyncTraces: true,
      }),
    stop: async () => {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A child script's connection as `service`, from the environment `serviceEnv(service)` gave it. */
export function connectFromEnv(service: BusService): Promise<NatsConnection> {
  const { NATS_URL, NATS_USER, NATS_PASSWORD, AGN_STREAM_REPLICAS } = process.env;
  if (!NATS_URL || NATS_USER !== service || !NATS_PASSWORD) {
    throw new Error(
      `the benchmark that started this script sets NATS_URL, NATS_USER=${service} and NATS_PASSWORD`,
    );
  }
  return connectBus({
    url: NATS_URL,
    service,
    auth: { user: NATS_USER, password: NATS_PASSWORD },
    ...(AGN_STREAM_REPLICAS ? { streamReplicas: Number(AGN_STREAM_REPLICAS) } : {}),
  });
}
