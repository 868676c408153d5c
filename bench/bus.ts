/**
 * The benchmarks' NATS: a nats-server of the run's own, on a free port, requiring credentials as
 * every stack does. Services join as themselves (their env from `serviceEnv`); the benchmark drives
 * the bus as an operator. Child scripts connect with `connectFromEnv`.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectBus } from "@agentnet/bus";
import type { BusService } from "@agentnet/contracts";
import { freePort, generateBusCredentials, startNats } from "@agentnet/local-backends";
import { connect, type NatsConnection } from "@nats-io/transport-node";

const OPERATOR = "bench-operator";

export async function startBenchNats() {
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
    pid: nats.pid ?? 0,
    /** The environment a service's process joins with (as the services read it). */
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

/** A child script's connection as `service`, from the environment `serviceEnv(service)` gave it. */
export function connectFromEnv(service: BusService): Promise<NatsConnection> {
  const { NATS_URL, NATS_USER, NATS_PASSWORD } = process.env;
  if (!NATS_URL || NATS_USER !== service || !NATS_PASSWORD) {
    throw new Error(
      `the benchmark that started this script sets NATS_URL, NATS_USER=${service} and NATS_PASSWORD`,
    );
  }
  return connectBus({ url: NATS_URL, service, auth: { user: NATS_USER, password: NATS_PASSWORD } });
}
