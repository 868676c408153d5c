/**
 * Gateway proxy benchmark: one local mock upstream (OpenAI wire format, a separate process), hit
 * directly, through agentnet (policy decision, token auth, one JetStream event per request), through
 * agentnet with a cap in force (decided against the proxy's leases of headroom, renewed off the
 * request path), through the same proxy without metrics when `BENCH_TARGETS` names
 * "agentnet (metrics off)" (the others run with AGN_METRICS_PORT set), through two workers of it
 * when it names "agentnet (2 workers)" (AGN_PROXY_WORKERS=2), through the "node floor"
 * (`node-floor.ts`: what any Node gateway does per request, agentnet's features aside), and through
 * Portkey's open-source gateway (`@portkey-ai/gateway`, a child process) — non-streaming and
 * streaming.
 * Latency: sequential requests on one keep-alive connection (added = p50/p99 minus direct).
 * Throughput: autocannon, 64 connections, fixed duration; agentnet's targets take turns in 1 s
 * slices. The gateway under test has a CPU to itself. Everything on loopback.
 *
 *   pnpm --filter @agentnet/bench bench:proxy
 *   BENCH_SECONDS=10 BENCH_LATENCY_REQUESTS=2000 pnpm --filter @agentnet/bench bench:proxy
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { deleteDurableConsumer } from "@agentnet/bus";
import { ACCOUNT_EVENTS_STREAM } from "@agentnet/contracts";
import { freePort } from "@agentnet/local-backends";
import { runBench } from "./bench-script";
import { processTreeCpuMs } from "./process-cpu";
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
  throughput,
  WARMUP_SECONDS,
} from "./proxy-load";
import {
  createBenchAccount,
  ROOT,
  startBenchBackends,
  startChild,
  startConsumptionProcess,
  startMockUpstream,
  startNodeFloor,
  startProxyProcess,
  stopChildren,
} from "./proxy-stack";

/** Comma list narrowing a run while iterating (e.g. `BENCH_TARGETS=agentnet BENCH_MODES=non-streaming`). */
const TARGETS = process.env.BENCH_TARGETS?.split(",");
/**
 * The same proxy without metrics (no AGN_METRICS_PORT), a process of its own: run only when
 * `BENCH_TARGETS` names it, against "agentnet", whose proxy keeps them.
 */
const METRICS_OFF = "agentnet (metrics off)";
/**
 * Another checkout's proxy (`BENCH_BASELINE_ROOT`, e.g. a `git worktree` of an older commit with its
 * own `pnpm install`), metrics off, against this run's backends: a change to the request path is
 * judged against the build before it in the same run. Its bus contracts must match this checkout's.
 */
const BASELINE = "agentnet (baseline build)";
const BASELINE_ROOT = process.env.BENCH_BASELINE_ROOT;

/**
 * The proxy as two worker processes on one port (`AGN_PROXY_WORKERS=2`), metrics on, against
 * "agentnet": run only when `BENCH_TARGETS` names it. Its workers are pinned with the others to the
 * gateway's one CPU unless `BENCH_PIN=0`, the run that says what a second core brings.
 */
const TWO_WORKERS = "agentnet (2 workers)";

/** The bare Node proxy agentnet's targets are compared with (issue 39's floor). */
const NODE_FLOOR = "node floor";

/**
 * The gateway under test runs on a CPU of its own (the last one); this process, the upstream,
 * NATS, consumption and FerretDB share the rest, as a deployed proxy does not share its machine with
 * its load or its backends. `BENCH_PIN=0` leaves scheduling to the kernel.
 */
const GATEWAY_CPU =
  process.env.BENCH_PIN === "0" || availableParallelism() < 2 ? undefined : availableParallelism() - 1;

/** Keeps this process (every thread) and the children it starts from now on off the gateway's CPU. */
function pinBenchAwayFromGateway() {
  if (GATEWAY_CPU === undefined) return;
  execFileSync("taskset", ["-a", "-cp", `0-${GATEWAY_CPU - 1}`, String(process.pid)], { stdio: "ignore" });
}

/** A gateway's command line, run on its own CPU. */
const onGatewayCpu = (args: string[]) =>
  GATEWAY_CPU === undefined ? args : ["taskset", "-c", String(GATEWAY_CPU), ...args];

const BACKEND_PARTS = ["consumption", "nats", "ferretdb"] as const;
type BackendPart = (typeof BACKEND_PARTS)[number];

/** A target's throughput phase of one round, summed over its slices. */
interface Load {
  requests: number;
  seconds: number;
  failed: number;
  proxyMs: number;
  backendMs: Record<BackendPart, number>;
}

const emptyLoad = (): Load => ({
  requests: 0,
  seconds: 0,
  failed: 0,
  proxyMs: 0,
  backendMs: { consumption: 0, nats: 0, ferretdb: 0 },
});

// ---- the run ----
async function main() {
  pinBenchAwayFromGateway();
  const backends = await startBenchBackends("agentnet_bench");
  const { nats, nc, mongo, sealingText } = backends;
  const children: ChildProcess[] = [];
  const durable = `bench-proxy-${Date.now()}`;
  try {
    const upstream = await startMockUpstream();
    children.push(upstream.child);

    // The proxy as deployed with metrics on (AGN_METRICS_PORT; nothing scrapes it during the run,
    // so what is measured is the counting on the request path) and, for the "metrics off" target,
    // a second one without: both on the gateway's CPU, loaded in turns.
    const startProxy = async (name: string, metrics: boolean, root = ROOT, workers?: number) => {
      const started = await startProxyProcess({
        name,
        busEnv: nats.serviceEnv("gateway-proxy"),
        sealingText,
        upstreamPort: upstream.port,
        metrics,
        root,
        ...(workers === undefined ? {} : { env: { AGN_PROXY_WORKERS: String(workers) } }),
        wrap: onGatewayCpu,
      });
      children.push(started.child);
      return started;
    };
    const proxy = await startProxy("agentnet", true);
    const unmetered = TARGETS?.includes(METRICS_OFF) ? await startProxy(METRICS_OFF, false) : undefined;
    const baseline = BASELINE_ROOT ? await startProxy(BASELINE, false, BASELINE_ROOT) : undefined;
    const twoWorkers = TARGETS?.includes(TWO_WORKERS)
      ? await startProxy(TWO_WORKERS, true, ROOT, 2)
      : undefined;
    const floor = await startNodeFloor(upstream.url, { wrap: onGatewayCpu });
    children.push(floor.child);
    const portkeyPort = await freePort();
    const portkeyMain = join(
      ROOT,
      "bench",
      "node_modules",
      "@portkey-ai",
      "gateway",
      "build",
      "start-server.js",
    );
    children.push(
      await startChild(
        "portkey",
        onGatewayCpu(["node", portkeyMain, `--port=${portkeyPort}`, "--headless"]),
        { NODE_ENV: "production" },
        "Ready for connections",
      ),
    );

    const plain = (await createBenchAccount(nc, upstream.url, false)).token;
    const cappedToken = (await createBenchAccount(nc, upstream.url, true)).token;
    const targets: Target[] = [
      {
        name: "direct",
        url: `${upstream.url}/v1/chat/completions`,
        headers: { authorization: "Bearer sk-bench" },
      },
      {
        name: "agentnet",
        url: proxy.url,
        headers: { authorization: `Bearer ${plain}` },
      },
      {
        name: "agentnet + cap",
        url: proxy.url,
        headers: { authorization: `Bearer ${cappedToken}` },
      },
      ...(unmetered
        ? [
            {
              name: METRICS_OFF,
              url: unmetered.url,
              headers: { authorization: `Bearer ${plain}` },
              pid: unmetered.pid,
            },
          ]
        : []),
      ...(baseline
        ? [
            {
              name: BASELINE,
              url: baseline.url,
              headers: { authorization: `Bearer ${plain}` },
              pid: baseline.pid,
            },
          ]
        : []),
      ...(twoWorkers
        ? [
            {
              name: TWO_WORKERS,
              url: twoWorkers.url,
              headers: { authorization: `Bearer ${plain}` },
              pid: twoWorkers.pid,
            },
          ]
        : []),
      { name: NODE_FLOOR, url: floor.url, headers: { authorization: "Bearer sk-bench" }, pid: floor.pid },
      {
        name: "portkey",
        url: `http://127.0.0.1:${portkeyPort}/v1/chat/completions`,
        headers: {
          authorization: "Bearer sk-bench",
          "x-portkey-provider": "openai",
          "x-portkey-custom-host": `${upstream.url}/v1`,
        },
      },
    ];
    // Consumption (lease grants and the settlement consumer) runs in a process of its own for the
    // whole run, as in a deployed stack, where it reads every event whether a cap applies or not:
    // the "+ cap" rows then differ from the plain ones by what a cap costs, not by a service more.
    const consumptionChild = await startConsumptionProcess({
      name: "consumption",
      busEnv: nats.serviceEnv("consumption"),
      mongoUrl: backends.databaseUrl,
      durable,
    });
    children.push(consumptionChild);
    const modes = [false, true].filter((stream) => MODES.includes(stream ? "streaming" : "non-streaming"));
    const selected = targets.filter(
      (target) =>
        target.name === "direct" || target.name === BASELINE || !TARGETS || TARGETS.includes(target.name),
    );
    // Rounds interleave the targets, so a burst of load elsewhere on the machine lands on all of
    // them rather than on one row, and alternate their order (what runs before a target leaves
    // work behind, e.g. events still to settle); each row is the median of its rounds.
    const samples = new Map<
      string,
      { lat: Measured; rps: number; failed: number; proxyCpuUs: number; backendCpuUs: number }[]
    >();
    // What else a request costs on this machine: consumption (settling), NATS and FerretDB.
    const backendCpuMs = (): Record<BackendPart, number> => ({
      consumption: processTreeCpuMs(consumptionChild.pid ?? 0),
      nats: processTreeCpuMs(nats.pids[0] ?? 0),
      ferretdb: processTreeCpuMs(mongo.pid ?? 0),
    });
    for (const stream of modes) {
      if (WARMUP_SECONDS > 0)
        for (const target of selected) await throughput(target, stream, { seconds: WARMUP_SECONDS });
      for (let round = 1; round <= ROUNDS; round++) {
        // Every other round in reverse, so no target always follows the same one.
        const ordered = round % 2 === 1 ? selected : [...selected].reverse();
        // Portkey is measured on its own: its failing streams would put their tails on every target.
        const lats = new Map([
          ...(await latencies(
            ordered.filter((target) => target.name !== "portkey"),
            stream,
          )),
          ...(await latencies(
            ordered.filter((target) => target.name === "portkey"),
            stream,
          )),
        ]);
        // agentnet's targets and the node floor run their throughput phase in slices, taking turns
        // slice by slice: the machine's speed drifts over seconds, and in slices it drifts under
        // all alike. A slice is shorter than the proxy's lease idle time, so the capped target's
        // leases see steady load, as in one long phase. The other targets (direct, Portkey) run in
        // one piece.
        const loads = new Map(ordered.map((target) => [target.name, emptyLoad()]));
        const measure = async (target: Target, seconds: number) => {
          const load = loads.get(target.name) as Load;
          const proxyPid = target.pid ?? proxy.pid;
          const proxyBefore = processTreeCpuMs(proxyPid);
          const backendBefore = backendCpuMs();
          const result = await throughput(target, stream, { seconds });
          const backendAfter = backendCpuMs();
          load.proxyMs += processTreeCpuMs(proxyPid) - proxyBefore;
          for (const part of BACKEND_PARTS) load.backendMs[part] += backendAfter[part] - backendBefore[part];
          load.requests += result.requests;
          load.seconds += result.seconds;
          load.failed += result.non2xx + result.errors;
        };
        const sliced = ordered.filter(
          (target) => target.name.startsWith("agentnet") || target.name === NODE_FLOOR,
        );
        for (const target of ordered) if (!sliced.includes(target)) await measure(target, SECONDS);
        // In the round's order every slice (which target goes first alternates by round): a target
        // then waits one slice between its own, never two.
        for (let slice = 0; slice < SLICES; slice++) {
          for (const target of sliced) await measure(target, SECONDS / SLICES);
        }
        for (const target of ordered) {
          const lat = lats.get(target.name) as Measured;
          const load = loads.get(target.name) as Load;
          const rps = load.requests / load.seconds;
          const perRequestUs = (ms: number) => (load.requests > 0 ? (ms * 1000) / load.requests : Number.NaN);
          const proxyCpuUs = perRequestUs(load.proxyMs);
          const [consumptionUs, natsUs, ferretdbUs] = BACKEND_PARTS.map((part) =>
            perRequestUs(load.backendMs[part]),
          ) as [number, number, number];
          const backendCpuUs = consumptionUs + natsUs + ferretdbUs;
          const key = `${stream} ${target.name}`;
          samples.set(key, [
            ...(samples.get(key) ?? []),
            { lat, rps, failed: load.failed, proxyCpuUs, backendCpuUs },
          ]);
          process.stdout.write(
            `round ${round} ${stream ? "streaming" : "non-streaming"} ${target.name}: p50 ${lat.p50.toFixed(2)} p99 ${lat.p99.toFixed(2)} ms, ${Math.round(rps)} req/s, CPU per request: proxy ${proxyCpuUs.toFixed(0)} µs, consumption ${consumptionUs.toFixed(0)} + NATS ${natsUs.toFixed(0)} + FerretDB ${ferretdbUs.toFixed(0)} µs\n`,
          );
        }
      }
    }
    const summary = (stream: boolean, name: string) => {
      const runs = samples.get(`${stream} ${name}`) ?? [];
      return {
        ...summarizeRounds(runs),
        proxyCpuUs: median(runs.map((run) => run.proxyCpuUs)),
        backendCpuUs: median(runs.map((run) => run.backendCpuUs)),
      };
    };
    const table = modes.flatMap((stream) =>
      selected.map((target) => {
        const row = summary(stream, target.name);
        const base = summary(stream, "direct");
        const added =
          target.name === "direct"
            ? "—"
            : `${(row.p50 - base.p50).toFixed(2)} / ${(row.p99 - base.p99).toFixed(2)}`;
        return `| ${stream ? "streaming" : "non-streaming"} | ${target.name} | ${row.p50.toFixed(2)} / ${row.p99.toFixed(2)} | ${added} | ${Math.round(row.rps)} | ${row.failed} |`;
      }),
    );
    process.stdout.write(
      `\n| mode | target | latency p50 / p99 (ms) | added p50 / p99 (ms) | req/s (${CONNECTIONS} conns, ${SECONDS} s) | non-2xx + errors |\n|---|---|---|---|---|---|\n${table.join("\n")}\n`,
    );
    // The cap's cost, the metrics', the change's against the baseline build, and agentnet's share
    // of the node floor, round by round.
    const pairs = [
      ["agentnet + cap", "agentnet"],
      ["agentnet", METRICS_OFF],
      [METRICS_OFF, BASELINE],
      [TWO_WORKERS, "agentnet"],
      ["agentnet", NODE_FLOOR],
      ["agentnet + cap", NODE_FLOOR],
    ] as const;
    for (const stream of modes) {
      for (const [name, baseName] of pairs) {
        const baseRuns = samples.get(`${stream} ${baseName}`) ?? [];
        const runs = samples.get(`${stream} ${name}`) ?? [];
        if (baseRuns.length === 0 || runs.length !== baseRuns.length) continue;
        const compared = compareRounds(
          runs.map((run) => ({ rps: run.rps, ...run.lat })),
          baseRuns.map((run) => ({ rps: run.rps, ...run.lat })),
        );
        const base = summary(stream, baseName);
        const row = summary(stream, name);
        process.stdout.write(
          `${stream ? "streaming" : "non-streaming"}: ${name} = ${compared.ratio} of ${baseName} req/s; its p50 ${compared.p50} and p99 ${compared.p99} from ${baseName}'s; CPU per request: proxy ${row.proxyCpuUs.toFixed(0)} vs ${base.proxyCpuUs.toFixed(0)} µs, consumption + NATS + FerretDB ${row.backendCpuUs.toFixed(0)} vs ${base.backendCpuUs.toFixed(0)} µs\n`,
        );
      }
    }
  } finally {
    await stopChildren(children);
    await deleteDurableConsumer(nc, durable).catch(() => undefined);
    await deleteDurableConsumer(nc, `${durable}-accounts`, ACCOUNT_EVENTS_STREAM).catch(() => undefined);
    await backends.stop();
  }
}

runBench(main);
