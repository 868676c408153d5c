/**
 * bench:proxy's agentnet targets on one NATS node and on a three-node NATS cluster, in one run.
 * "one node": 1 nats-server, 1 proxy, 1 consumption. "cluster": 3 nats-servers on loopback with
 * routes and JetStream, every stream and KV bucket at 3 replicas, 3 proxies each given the three
 * servers as NATS_URL, 2 consumption replicas of which one leads. Each stack has a plain account
 * and a capped one (a token cap far from binding: every request admitted on leases and settled).
 * Latency: sequential requests through one proxy at one connection, the targets taking turns.
 * Throughput: 64 connections spread over the stack's proxies (one autocannon per proxy, at once,
 * as a load balancer spreads them), the targets taking turns in slices of a fixed number of
 * requests, all answered: afterwards each account's events in the request stream, and the capped
 * account's counters, are checked against exactly what was served.
 *
 *   pnpm --filter @agentnet/bench bench:cluster
 *   BENCH_ROUNDS=3 BENCH_SECONDS=4 pnpm --filter @agentnet/bench bench:cluster
 */
import { join } from "node:path";
import { REQUESTS_STREAM } from "@agentnet/contracts";
import { ensureMongo } from "@agentnet/local-backends";
import { generateSealingKey } from "@agentnet/sealing";
import { runBench } from "./bench-script";
import { type BenchBus, startBenchNats, startBenchNatsCluster } from "./bus";
import {
  STACK_PARTS,
  type Stack,
  type StackPart,
  type StackShared,
  stackCpuMs,
  startStack,
  streamReplicas,
} from "./cluster-stack";
import { type Served, settledExactness } from "./exactness";
import { MOCK_UPSTREAM_USAGE } from "./mock-upstream";
import {
  CONNECTIONS,
  compareRounds,
  latencies,
  type Measured,
  MODES,
  median,
  ROUNDS,
  SECONDS,
  SLICES,
  summarizeRounds,
  type Target,
  type Throughput,
  throughput,
  WARMUP_SECONDS,
} from "./proxy-load";
import { ROOT, startMockUpstream, stopChildren } from "./proxy-stack";

const ONE_NODE = "one node";
const CLUSTER = "cluster";

/** A target's throughput phase of one round, summed over its slices. */
interface Load {
  served: number;
  seconds: number;
  failed: number;
  cpuMs: Record<StackPart, number>;
}

interface Sample {
  lat: Measured;
  rps: number;
  failed: number;
  /** CPU per request served in the throughput phase, by part. */
  cpuUs: Record<StackPart, number>;
}

/** A stack and one of its accounts: a row of the table. */
interface StackTarget extends Served {
  name: string;
  stack: Stack;
  /** One per proxy, all with the account's token. */
  proxies: Target[];
  /**
   * Req/s that sizes its slices: its warm-up's, then its last round's. A round's rate, not a
   * slice's: one slow slice would shrink the next, whose connection set-up would then weigh more.
   */
  rate: number;
}

const stackTarget = (stack: Stack, capped: boolean): StackTarget => {
  const account = capped ? stack.capped : stack.plain;
  const name = `${stack.name}${capped ? " + cap" : ""}`;
  return {
    name,
    stack,
    account,
    capped,
    proxies: stack.proxyUrls.map((url) => ({
      name,
      url,
      headers: { authorization: `Bearer ${account.token}` },
    })),
    served: 0,
    rate: 0,
  };
};

/** The `index`th of `parts` near-equal shares of `total`. */
const share = (total: number, parts: number, index: number) =>
  Math.floor(total / parts) + (index < total % parts ? 1 : 0);

/** Requests of a slice at least: a few per connection, so that setting up connections does not dominate it. */
const MIN_SLICE_REQUESTS = CONNECTIONS * 4;

/**
 * `requests` over the target's proxies at once, `CONNECTIONS` connections spread over them: the
 * phase lasts until the last proxy's last answer.
 */
async function spreadThroughput(target: StackTarget, stream: boolean, requests: number): Promise<Throughput> {
  const parts = target.proxies.length;
  const results = await Promise.all(
    target.proxies.map((proxy, index) =>
      throughput(
        proxy,
        stream,
        { requests: share(Math.max(requests, MIN_SLICE_REQUESTS), parts, index) },
        share(CONNECTIONS, parts, index),
      ),
    ),
  );
  const sum = (pick: (result: Throughput) => number) =>
    results.reduce((total, result) => total + pick(result), 0);
  const loaded = {
    requests: sum((result) => result.requests),
    served: sum((result) => result.served),
    seconds: Math.max(...results.map((result) => result.seconds)),
    non2xx: sum((result) => result.non2xx),
    errors: sum((result) => result.errors),
  };
  target.served += loaded.served;
  return loaded;
}

async function main() {
  const mongo = await ensureMongo({
    url: process.env.BENCH_MONGO_URL ?? "mongodb://127.0.0.1:27455/agentnet_bench",
    dataDir: join(ROOT, ".data", "bench"),
  });
  const shared: StackShared = {
    mongoUrl: mongo.url,
    upstream: { port: 0, url: "" },
    sealingText: generateSealingKey(),
    children: [],
  };
  const buses: BenchBus[] = [];
  const stacks: Stack[] = [];
  let allExact = true;
  try {
    const upstream = await startMockUpstream();
    shared.children.push(upstream.child);
    shared.upstream = upstream;
    const oneNodeBus = await startBenchNats();
    buses.push(oneNodeBus);
    stacks.push(await startStack(ONE_NODE, oneNodeBus, { proxies: 1, consumptions: 1 }, shared));
    const clusterBus = await startBenchNatsCluster();
    buses.push(clusterBus);
    stacks.push(await startStack(CLUSTER, clusterBus, { proxies: 3, consumptions: 2 }, shared));
    for (const stack of stacks) {
      const streams = await streamReplicas(stack);
      process.stdout.write(
        `${stack.name}: ${stack.proxyUrls.length} proxies; streams and buckets ${streams.map((each) => `${each.name} R${each.replicas}`).join(", ")}\n`,
      );
      const wanted = stack.name === CLUSTER ? 3 : 1;
      if (streams.some((each) => each.replicas !== wanted)) {
        throw new Error(`${stack.name}: every stream and bucket should have ${wanted} replicas`);
      }
    }

    const targets = stacks.flatMap((stack) => [stackTarget(stack, false), stackTarget(stack, true)]);
    const direct: Target = {
      name: "direct",
      url: `${upstream.url}/v1/chat/completions`,
      headers: { authorization: "Bearer sk-bench" },
    };
    const modes = [false, true].filter((stream) => MODES.includes(stream ? "streaming" : "non-streaming"));
    const samples = new Map<string, Sample[]>();
    for (const stream of modes) {
      const modeName = stream ? "streaming" : "non-streaming";
      // A first batch sizes the warm-up, which sizes the first slice.
      for (const target of targets) {
        const first = await spreadThroughput(target, stream, CONNECTIONS * 10);
        const warmup = await spreadThroughput(
          target,
          stream,
          Math.round((first.served / first.seconds) * WARMUP_SECONDS),
        );
        target.rate = warmup.served / warmup.seconds;
      }
      for (let round = 1; round <= ROUNDS; round++) {
        // Every other round in reverse, so no target always follows the same one.
        const ordered = round % 2 === 1 ? targets : [...targets].reverse();
        // Latency through one proxy (the first) per stack.
        const lats = await latencies(
          [direct, ...ordered.map((target) => target.proxies[0] as Target)],
          stream,
        );
        for (const target of ordered) target.served += lats.get(target.name)?.served ?? 0;
        const loads = new Map(
          ordered.map((target) => [
            target.name,
            { served: 0, seconds: 0, failed: 0, cpuMs: { proxies: 0, nats: 0, consumption: 0 } },
          ]),
        );
        // Slices taking turns (which target goes first alternates by round), each sized to last
        // SECONDS / SLICES at the target's rate: shorter than the proxy's lease idle time, so
        // the capped targets' leases see steady load.
        for (let slice = 0; slice < SLICES; slice++) {
          for (const target of ordered) {
            const cpuBefore = stackCpuMs(target.stack);
            const result = await spreadThroughput(
              target,
              stream,
              Math.round((target.rate * SECONDS) / SLICES),
            );
            const cpuAfter = stackCpuMs(target.stack);
            const load = loads.get(target.name) as Load;
            for (const part of STACK_PARTS) load.cpuMs[part] += cpuAfter[part] - cpuBefore[part];
            load.served += result.served;
            load.seconds += result.seconds;
            load.failed += result.non2xx + result.errors;
          }
        }
        for (const target of ordered) {
          const load = loads.get(target.name) as Load;
          target.rate = load.served / load.seconds;
        }
        for (const target of [direct, ...ordered]) {
          const lat = lats.get(target.name) as Measured;
          const load = loads.get(target.name);
          const rps = load ? load.served / load.seconds : Number.NaN;
          const failed = lat.failures + (load?.failed ?? 0);
          const cpuUs = Object.fromEntries(
            STACK_PARTS.map((part) => [part, load ? (load.cpuMs[part] * 1000) / load.served : Number.NaN]),
          ) as Record<StackPart, number>;
          const key = `${stream} ${target.name}`;
          samples.set(key, [...(samples.get(key) ?? []), { lat, rps, failed, cpuUs }]);
          process.stdout.write(
            `round ${round} ${modeName} ${target.name}: p50 ${lat.p50.toFixed(2)} p99 ${lat.p99.toFixed(2)} ms, ${load ? `${Math.round(rps)} req/s, CPU per request: proxies ${cpuUs.proxies.toFixed(0)} + NATS ${cpuUs.nats.toFixed(0)} + consumption ${cpuUs.consumption.toFixed(0)} µs` : "latency only"}, ${failed} failed\n`,
          );
        }
      }
    }

    const summary = (stream: boolean, name: string) => {
      const runs = samples.get(`${stream} ${name}`) ?? [];
      return {
        ...summarizeRounds(runs),
        cpuUs: STACK_PARTS.map((part) => median(runs.map((run) => run.cpuUs[part]))),
      };
    };
    const rows = modes.flatMap((stream) =>
      [direct.name, ...targets.map((target) => target.name)].map((name) => {
        const row = summary(stream, name);
        const base = summary(stream, direct.name);
        const proxies = targets.find((target) => target.name === name)?.proxies.length;
        const added =
          name === direct.name
            ? "—"
            : `${(row.p50 - base.p50).toFixed(2)} / ${(row.p99 - base.p99).toFixed(2)}`;
        const rps = proxies ? `${Math.round(row.rps)}` : "—";
        const cpu = proxies ? row.cpuUs.map((us) => us.toFixed(0)).join(" + ") : "—";
        return `| ${stream ? "streaming" : "non-streaming"} | ${name} | ${proxies ?? "—"} | ${row.p50.toFixed(2)} / ${row.p99.toFixed(2)} | ${added} | ${rps} | ${cpu} | ${row.failed} |`;
      }),
    );
    process.stdout.write(
      `\n| mode | target | proxies | latency p50 / p99 (ms), 1 conn | added p50 / p99 (ms) | req/s (${CONNECTIONS} conns, all proxies) | CPU per request (µs): proxies + NATS + consumption | non-2xx + errors |\n|---|---|---|---|---|---|---|---|\n${rows.join("\n")}\n\n`,
    );
    for (const stream of modes) {
      for (const capped of [false, true]) {
        const suffix = capped ? " + cap" : "";
        const runs = samples.get(`${stream} ${CLUSTER}${suffix}`) ?? [];
        const baseRuns = samples.get(`${stream} ${ONE_NODE}${suffix}`) ?? [];
        const compared = compareRounds(
          runs.map((run) => ({ rps: run.rps, ...run.lat })),
          baseRuns.map((run) => ({ rps: run.rps, ...run.lat })),
        );
        process.stdout.write(
          `${stream ? "streaming" : "non-streaming"}: ${CLUSTER}${suffix} = ${compared.ratio} of ${ONE_NODE}${suffix} req/s; its p99 ${compared.p99} from ${ONE_NODE}${suffix}'s\n`,
        );
      }
    }

    const exactRows: string[] = [];
    for (const target of targets) {
      const checked = await settledExactness(target.stack.nc, target);
      allExact &&= checked.exact;
      const expected = `${checked.served * MOCK_UPSTREAM_USAGE.prompt_tokens} / ${checked.served * MOCK_UPSTREAM_USAGE.completion_tokens}`;
      const counters = target.capped
        ? checked.counters
            .map((counter) => `${counter.dimension.split(":")[0]} ${counter.input} / ${counter.output}`)
            .join("; ") || "none"
        : "— (no cap)";
      exactRows.push(
        `| ${target.name} | ${checked.served} | ${checked.events} | ${target.capped ? expected : "—"} | ${counters} | ${checked.exact ? "yes" : "NO"} |`,
      );
    }
    process.stdout.write(
      `\n| target | requests served (2xx) | events in ${REQUESTS_STREAM} | tokens served in / out | counters in / out, per dimension | exact |\n|---|---|---|---|---|---|\n${exactRows.join("\n")}\n`,
    );
  } finally {
    await stopChildren(shared.children);
    for (const stack of stacks) {
      await stack.nc.drain().catch(() => undefined);
      await stack.connection.dropDatabase().catch(() => undefined);
      await stack.connection.close();
    }
    for (const bus of buses) await bus.stop();
    await mongo.stop();
  }
  if (!allExact) throw new Error("what was served and what was counted differ: see the table");
}

runBench(main);
