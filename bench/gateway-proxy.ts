/**
 * Gateway proxy benchmark: one local mock upstream (OpenAI wire format, a separate process), hit
 * directly, through agentnet (policy decision, token auth, one JetStream event per request), through
 * agentnet with a cap in force (decided against the proxy's leases of headroom, renewed off the
 * request path), through the same proxy without metrics when `BENCH_TARGETS` names
 * "agentnet (metrics off)" (the others run with AGN_METRICS_PORT set), and through Portkey's
 * open-source gateway (`@portkey-ai/gateway`, a child process) — non-streaming and streaming.
 * Latency: sequential requests on one keep-alive connection (added = p50/p99 minus direct).
 * Throughput: autocannon, 64 connections, fixed duration; agentnet's targets take turns in 1 s
 * slices. The gateway under test has a CPU to itself. Everything on loopback.
 *
 *   pnpm --filter @agentnet/bench bench:proxy
 *   BENCH_SECONDS=10 BENCH_LATENCY_REQUESTS=2000 pnpm --filter @agentnet/bench bench:proxy
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { deleteDurableConsumer, request } from "@agentnet/bus";
import { ACCOUNT_EVENTS_STREAM, type Caller, ControlPlane } from "@agentnet/contracts";
import { startControlPlane } from "@agentnet/control-plane/app";
import { ensureMongo, findRepoRoot } from "@agentnet/local-backends";
import { startVerifier } from "@agentnet/provider-verifier/app";
import { generateSealingKey, parseSealingKeys } from "@agentnet/sealing";
import { createLogger, hashToken } from "@agentnet/service-kit";
import autocannon from "autocannon";
import mongoose from "mongoose";
import { Pool } from "undici";
import { startBenchNats } from "./bus";
import { percentile } from "./percentile";
import { processTreeCpuMs } from "./process-cpu";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const LATENCY_REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 1500);
const CONNECTIONS = 64;
/** Each target is measured this many times, interleaved with the others; rows report medians. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Load each target takes, per mode, before the first round: its first round is then not its JIT warm-up. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** agentnet's two targets run a round's throughput phase in this many slices each, taking turns. */
const SLICES = Number(process.env.BENCH_SLICES ?? 8);
/** Comma lists narrowing a run while iterating (e.g. `BENCH_TARGETS=agentnet BENCH_MODES=non-streaming`). */
const TARGETS = process.env.BENCH_TARGETS?.split(",");
const MODES = process.env.BENCH_MODES?.split(",") ?? ["non-streaming", "streaming"];
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
const ROOT = findRepoRoot();

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

// ---- mock upstream (runs in its own process: `tsx gateway-proxy.ts upstream`) ----
function serveUpstream() {
  const usage = {
    prompt_tokens: 12,
    completion_tokens: 6,
    total_tokens: 18,
    prompt_tokens_details: { cached_tokens: 0 },
  };
  const completion = JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-4o-mini",
    choices: [
      { index: 0, message: { role: "assistant", content: "Hello there, friend!" }, finish_reason: "stop" },
    ],
    usage,
  });
  const chunk = (content: string) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
  const stream = `${["Hello", " there", ",", " friend", "!"].map(chunk).join("")}data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [], usage })}\n\ndata: [DONE]\n\n`;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (data: Buffer) => {
      body += data.toString();
    });
    req.on("end", () => {
      if (body.includes('"stream":true')) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(stream);
      } else {
        res.writeHead(200, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(completion),
        });
        res.end(completion);
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
    process.stdout.write(
      `${JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port })}\n`,
    );
  });
}

// ---- child processes ----
function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  readyText: string,
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(args[0] ?? "node", args.slice(1), {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start: ${output.slice(-2000)}`)),
      60_000,
    );
    const onData = (data: Buffer) => {
      output += data.toString();
      if (output.includes(readyText)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}: ${output.slice(-2000)}`)));
  });
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

// ---- measurement ----
interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The process whose CPU a request costs (agentnet's targets; its proxy when unset). */
  pid?: number;
}

const body = (stream: boolean) =>
  JSON.stringify({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "Say hello" }],
    max_tokens: 16,
    ...(stream ? { stream: true } : {}),
  });

interface Measured {
  p50: number;
  p99: number;
  failures: number;
}

/**
 * Sequential requests on one keep-alive connection per target, the targets taking turns request by
 * request (in a rotating order): a burst of work elsewhere on the machine (settling, GC, a flush)
 * then lands on every target alike, so their tails compare within the run.
 */
async function latencies(targets: Target[], stream: boolean): Promise<Map<string, Measured>> {
  const clients = targets.map((target) => {
    const url = new URL(target.url);
    const pool = new Pool(url.origin, { connections: 1 });
    const client = {
      target,
      pool,
      failures: 0,
      samples: [] as number[],
      send: async () => {
        const response = await pool.request({
          method: "POST",
          path: url.pathname,
          headers: { "content-type": "application/json", ...target.headers },
          body: body(stream),
        });
        const text = await response.body.text();
        if (response.statusCode !== 200 && client.failures++ === 0) {
          process.stderr.write(`${target.name}: status ${response.statusCode}: ${text.slice(0, 300)}\n`);
        }
      },
    };
    return client;
  });
  for (let i = 0; i < 200; i++) for (const client of clients) await client.send();
  for (const client of clients) client.failures = 0;
  for (let i = 0; i < LATENCY_REQUESTS; i++) {
    for (let turn = 0; turn < clients.length; turn++) {
      const client = clients[(i + turn) % clients.length] as (typeof clients)[number];
      const start = process.hrtime.bigint();
      await client.send();
      client.samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  const measured = new Map<string, Measured>();
  for (const client of clients) {
    await client.pool.close();
    const samples = client.samples.sort((a, b) => a - b);
    measured.set(client.target.name, {
      p50: percentile(samples, 0.5),
      p99: percentile(samples, 0.99),
      failures: client.failures,
    });
  }
  return measured;
}

async function throughput(target: Target, stream: boolean, seconds = SECONDS) {
  const result = await autocannon({
    url: target.url,
    method: "POST",
    headers: { "content-type": "application/json", ...target.headers },
    body: body(stream),
    connections: CONNECTIONS,
    duration: seconds,
  });
  return {
    requests: result.requests.total,
    seconds: result.duration,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

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
  const logger = createLogger("bench", "warn");
  const dataDir = join(ROOT, ".data", "bench");
  const nats = await startBenchNats();
  const mongo = await ensureMongo({
    url: process.env.BENCH_MONGO_URL ?? "mongodb://127.0.0.1:27455/agentnet_bench",
    dataDir,
  });
  const children: ChildProcess[] = [];
  const durable = `bench-proxy-${Date.now()}`;
  const nc = await nats.connectOperator("bench");
  // A database per run: its credentials are sealed with this run's key.
  const database = new URL(mongo.url);
  database.pathname = `/agentnet_bench_${Date.now()}`;
  const connection = await mongoose.createConnection(database.toString()).asPromise();
  const sealingText = generateSealingKey();
  const sealingKey = parseSealingKeys(sealingText);
  try {
    const tsx = join(ROOT, "node_modules", ".bin", "tsx");
    const upstreamPort = await freePort();
    children.push(
      await startChild(
        "upstream",
        [tsx, join(ROOT, "bench", "gateway-proxy.ts"), "upstream"],
        { PORT: String(upstreamPort) },
        '"ready":true',
      ),
    );
    await startControlPlane({ nc: await nats.connectAs("control-plane"), connection, logger, sealingKey });
    await startVerifier({ nc: await nats.connectAs("provider-verifier"), logger });

    // The proxy as deployed with metrics on (AGN_METRICS_PORT; nothing scrapes it during the run,
    // so what is measured is the counting on the request path) and, for the "metrics off" target,
    // a second one without: both on the gateway's CPU, loaded in turns.
    const startProxy = async (name: string, metrics: boolean, root = ROOT) => {
      const port = await freePort();
      const child = await startChild(
        name,
        // BENCH_PROXY_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, profiles the proxy under load.
        onGatewayCpu([
          join(root, "node_modules", ".bin", "tsx"),
          ...(process.env.BENCH_PROXY_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
          join(root, "apps", "gateway-proxy", "src", "main.ts"),
        ]),
        {
          ...nats.serviceEnv("gateway-proxy"),
          AGN_SEALING_KEY: sealingText,
          AGN_PROXY_PORT: String(port),
          AGN_METRICS_PORT: metrics ? "0" : undefined,
          // The bench's vendor listens on loopback, which the proxy refuses unless allowed.
          AGN_ALLOWED_PRIVATE_UPSTREAMS: `127.0.0.1:${upstreamPort}`,
          LOG_LEVEL: "info",
        },
        '"ready":true',
      );
      children.push(child);
      return { port, pid: child.pid ?? 0 };
    };
    const proxy = await startProxy("agentnet", true);
    const unmetered = TARGETS?.includes(METRICS_OFF) ? await startProxy(METRICS_OFF, false) : undefined;
    const baseline = BASELINE_ROOT ? await startProxy(BASELINE, false, BASELINE_ROOT) : undefined;
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

    const upstream = `http://127.0.0.1:${upstreamPort}`;
    const account = async (capped: boolean) => {
      const boot = await request(nc, ControlPlane.accountsBootstrap, {
        email: `bench-${Date.now()}-${capped}@example.com`,
      });
      const caller: Caller = await request(nc, ControlPlane.authResolve, {
        token_hash: hashToken(boot.token),
      });
      await request(nc, ControlPlane.settingsCreate, { caller, body: { proxy_address: "gw.bench.local" } });
      const provider = await request(nc, ControlPlane.providersCreate, {
        caller,
        body: {
          provider_id: "openai_api",
          name: "OpenAI",
          upstream_url: `${upstream}/v1`,
          api_key: "sk-bench",
        },
      });
      const big = 1_000_000_000_000;
      await request(nc, ControlPlane.policiesCreate, {
        caller,
        body: {
          name: "all",
          source_groups: caller.group_ids,
          destination_provider_ids: [provider.id],
          ...(capped
            ? {
                limits: {
                  token_limit: { enabled: true, group_cap: big, user_cap: big, window_seconds: 3600 },
                  budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
                },
              }
            : {}),
        },
      });
      return boot.token;
    };
    const plain = await account(false);
    const cappedToken = await account(true);
    const targets: Target[] = [
      {
        name: "direct",
        url: `${upstream}/v1/chat/completions`,
        headers: { authorization: "Bearer sk-bench" },
      },
      {
        name: "agentnet",
        url: `http://127.0.0.1:${proxy.port}/v1/chat/completions`,
        headers: { authorization: `Bearer ${plain}` },
      },
      {
        name: "agentnet + cap",
        url: `http://127.0.0.1:${proxy.port}/v1/chat/completions`,
        headers: { authorization: `Bearer ${cappedToken}` },
      },
      ...(unmetered
        ? [
            {
              name: METRICS_OFF,
              url: `http://127.0.0.1:${unmetered.port}/v1/chat/completions`,
              headers: { authorization: `Bearer ${plain}` },
              pid: unmetered.pid,
            },
          ]
        : []),
      ...(baseline
        ? [
            {
              name: BASELINE,
              url: `http://127.0.0.1:${baseline.port}/v1/chat/completions`,
              headers: { authorization: `Bearer ${plain}` },
              pid: baseline.pid,
            },
          ]
        : []),
      {
        name: "portkey",
        url: `http://127.0.0.1:${portkeyPort}/v1/chat/completions`,
        headers: {
          authorization: "Bearer sk-bench",
          "x-portkey-provider": "openai",
          "x-portkey-custom-host": `${upstream}/v1`,
        },
      },
    ];
    // Consumption (lease grants and the settlement consumer) runs in a process of its own for the
    // whole run, as in a deployed stack, where it reads every event whether a cap applies or not:
    // the "+ cap" rows then differ from the plain ones by what a cap costs, not by a service more.
    const consumptionChild = await startChild(
      "consumption",
      [
        tsx,
        // As `agentnet up` starts it (apps/consumption/README.md, "Node flags").
        "--max-semi-space-size=64",
        ...(process.env.BENCH_CONSUMPTION_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
        join(ROOT, "bench", "consumption-service.ts"),
      ],
      { BENCH_MONGO_URL: database.toString(), BENCH_DURABLE: durable, ...nats.serviceEnv("consumption") },
      '"ready":true',
    );
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
      nats: processTreeCpuMs(nats.pid),
      ferretdb: processTreeCpuMs(mongo.pid ?? 0),
    });
    for (const stream of modes) {
      if (WARMUP_SECONDS > 0) for (const target of selected) await throughput(target, stream, WARMUP_SECONDS);
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
        // agentnet's two targets run their throughput phase in slices, taking turns slice by slice:
        // the machine's speed drifts over seconds, and in slices it drifts under both alike. A
        // slice is shorter than the proxy's lease idle time, so the capped target's leases see
        // steady load, as in one long phase. The other targets (references) run in one piece.
        const loads = new Map(ordered.map((target) => [target.name, emptyLoad()]));
        const measure = async (target: Target, seconds: number) => {
          const load = loads.get(target.name) as Load;
          const proxyPid = target.pid ?? proxy.pid;
          const proxyBefore = processTreeCpuMs(proxyPid);
          const backendBefore = backendCpuMs();
          const result = await throughput(target, stream, seconds);
          const backendAfter = backendCpuMs();
          load.proxyMs += processTreeCpuMs(proxyPid) - proxyBefore;
          for (const part of BACKEND_PARTS) load.backendMs[part] += backendAfter[part] - backendBefore[part];
          load.requests += result.requests;
          load.seconds += result.seconds;
          load.failed += result.non2xx + result.errors;
        };
        const sliced = ordered.filter((target) => target.name.startsWith("agentnet"));
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
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
    };
    const summary = (stream: boolean, name: string) => {
      const runs = samples.get(`${stream} ${name}`) ?? [];
      return {
        p50: median(runs.map((run) => run.lat.p50)),
        p99: median(runs.map((run) => run.lat.p99)),
        rps: median(runs.map((run) => run.rps)),
        proxyCpuUs: median(runs.map((run) => run.proxyCpuUs)),
        backendCpuUs: median(runs.map((run) => run.backendCpuUs)),
        failed: runs.reduce((total, run) => total + run.failed, 0),
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
    // The cap's cost, the metrics' and the change's against the baseline build, round by round: a round's sliced targets ran back to back
    // (their latency requests alternated one by one), so a shift of the machine's speed between
    // rounds cancels out of the ratio instead of landing on whichever target it hit.
    const pairs = [
      ["agentnet + cap", "agentnet"],
      ["agentnet", METRICS_OFF],
      [METRICS_OFF, BASELINE],
    ] as const;
    for (const stream of modes) {
      for (const [name, baseName] of pairs) {
        const baseRuns = samples.get(`${stream} ${baseName}`) ?? [];
        const runs = samples.get(`${stream} ${name}`) ?? [];
        if (baseRuns.length === 0 || runs.length !== baseRuns.length) continue;
        const ratios = runs.map((run, i) => (run.rps / (baseRuns[i]?.rps ?? Number.NaN)) * 100);
        const p99s = runs.map((run, i) => run.lat.p99 - (baseRuns[i]?.lat.p99 ?? Number.NaN));
        const base = summary(stream, baseName);
        const row = summary(stream, name);
        const range = (values: number[], digits: number) =>
          `${Math.min(...values).toFixed(digits)} to ${Math.max(...values).toFixed(digits)}`;
        process.stdout.write(
          `${stream ? "streaming" : "non-streaming"}: ${name} = ${median(ratios).toFixed(0)} % of ${baseName} req/s (median of ${ratios.length} rounds, ${range(ratios, 0)} %); its p99 ${median(p99s).toFixed(2)} ms from ${baseName}'s (${range(p99s, 2)}); CPU per request: proxy ${row.proxyCpuUs.toFixed(0)} vs ${base.proxyCpuUs.toFixed(0)} µs, consumption + NATS + FerretDB ${row.backendCpuUs.toFixed(0)} vs ${base.backendCpuUs.toFixed(0)} µs\n`,
        );
      }
    }
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(children.map((child) => new Promise((resolve) => child.once("exit", resolve))));
    await deleteDurableConsumer(nc, durable).catch(() => undefined);
    await deleteDurableConsumer(nc, `${durable}-accounts`, ACCOUNT_EVENTS_STREAM).catch(() => undefined);
    await nc.drain();
    await connection.close();
    await mongo.stop();
    await nats.stop();
  }
}

if (process.argv[2] === "upstream") serveUpstream();
else
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
