/**
 * The stacks bench:cluster compares: on a bus of their own (one nats-server or a cluster), the
 * control plane and verifier in the bench process, consumption and proxy processes, a database,
 * and a plain and a capped account.
 */
import type { ChildProcess } from "node:child_process";
import { startControlPlane } from "@agentnet/control-plane/app";
import { startVerifier } from "@agentnet/provider-verifier/app";
import { parseSealingKeys } from "@agentnet/sealing";
import { createLogger } from "@agentnet/service-kit";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import mongoose from "mongoose";
import type { BenchBus } from "./bus";
import { processTreeCpuMs } from "./process-cpu";
import {
  type BenchAccount,
  createBenchAccount,
  startConsumptionProcess,
  startProxyProcess,
} from "./proxy-stack";

export const STACK_PARTS = ["proxies", "nats", "consumption"] as const;
export type StackPart = (typeof STACK_PARTS)[number];

export interface Stack {
  name: string;
  bus: BenchBus;
  /** The bench's operator connection to this stack's bus. */
  nc: NatsConnection;
  connection: mongoose.Connection;
  proxyUrls: string[];
  /** The processes whose CPU a request costs, by part. */
  pids: Record<StackPart, number[]>;
  plain: BenchAccount;
  capped: BenchAccount;
}

/** What every stack of a run shares: the vendor, the sealing key, one MongoDB, the processes to stop. */
export interface StackShared {
  mongoUrl: string;
  upstream: { port: number; url: string };
  sealingText: string;
  children: ChildProcess[];
}

/**
 * A stack on `bus`: the control plane and verifier in this process (as bench:proxy runs them),
 * `consumptions` consumption processes (the first leads), `proxies` proxy processes with metrics
 * on, a database of its own, and its two accounts.
 */
export async function startStack(
  name: string,
  bus: BenchBus,
  size: { proxies: number; consumptions: number },
  shared: StackShared,
): Promise<Stack> {
  const logger = createLogger("bench", "warn");
  // A database per stack and run: its credentials are sealed with this run's key.
  const database = new URL(shared.mongoUrl);
  database.pathname = `/agentnet_bench_${name.replace(" ", "_")}_${Date.now()}`;
  const connection = await mongoose.createConnection(database.toString()).asPromise();
  const nc = await bus.connectOperator(`bench ${name}`);
  const sealingKey = parseSealingKeys(shared.sealingText);
  const pids: Record<StackPart, number[]> = { proxies: [], nats: bus.pids, consumption: [] };
  await startControlPlane({ nc: await bus.connectAs("control-plane"), connection, logger, sealingKey });
  await startVerifier({ nc: await bus.connectAs("provider-verifier"), logger });
  for (let index = 0; index < size.consumptions; index++) {
    const child = await startConsumptionProcess({
      name: `${name} consumption ${index + 1}`,
      busEnv: bus.serviceEnv("consumption"),
      mongoUrl: database.toString(),
      durable: "bench-cluster",
      standby: index > 0,
    });
    shared.children.push(child);
    pids.consumption.push(child.pid ?? 0);
  }
  const proxyUrls: string[] = [];
  for (let index = 0; index < size.proxies; index++) {
    const proxy = await startProxyProcess({
      name: `${name} proxy ${index + 1}`,
      busEnv: bus.serviceEnv("gateway-proxy"),
      sealingText: shared.sealingText,
      upstreamPort: shared.upstream.port,
      metrics: true,
    });
    shared.children.push(proxy.child);
    proxyUrls.push(proxy.url);
    pids.proxies.push(proxy.pid);
  }
  const plain = await createBenchAccount(nc, shared.upstream.url, false);
  const capped = await createBenchAccount(nc, shared.upstream.url, true);
  return { name, bus, nc, connection, proxyUrls, pids, plain, capped };
}

/** Every stream and KV bucket of the stack's bus with its replicas, e.g. `AGN_REQUESTS R3`. */
export async function streamReplicas(stack: Stack): Promise<{ name: string; replicas: number }[]> {
  const jsm = await jetstreamManager(stack.nc);
  const streams: { name: string; replicas: number }[] = [];
  for await (const info of jsm.streams.list()) {
    streams.push({ name: info.config.name, replicas: info.config.num_replicas });
  }
  return streams.sort((a, b) => a.name.localeCompare(b.name));
}

/** CPU time (ms) the stack's processes have used, by part. */
export const stackCpuMs = (stack: Stack) =>
  Object.fromEntries(
    STACK_PARTS.map((part) => [
      part,
      stack.pids[part].reduce((total, pid) => total + processTreeCpuMs(pid), 0),
    ]),
  ) as Record<StackPart, number>;
