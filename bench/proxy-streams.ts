/**
 * Open streams on one proxy process (issue 39): `BENCH_STREAMS` concurrent streaming requests
 * (2,000 by default; the target is 10,000) through one gateway-proxy process to one upstream
 * origin that sends one small event a second for `BENCH_STREAM_SECONDS` (60). While they are all
 * open it measures the proxy's RSS and heap per open stream (against the same process idle), its
 * event-loop delay, and the latency of fresh non-streaming requests sent meanwhile, beside the same
 * requests sent directly to the upstream; afterwards, that every request has its event in the
 * request stream and the capped account's counters hold every token served. Then the same streams
 * and fresh requests go through the node floor (node-floor.ts, bench:proxy's bare Node proxy), so
 * that what agentnet adds is read beside what any Node proxy adds on the same machine in the same
 * run (`BENCH_TARGETS`, "agentnet,node floor" by default, picks either).
 *
 * Every connection is a file descriptor (the proxy holds two per stream): the bench raises the
 * open-file limits of its own process, the proxy's and the upstream's with `prlimit` where it may
 * (raising a hard limit takes CAP_SYS_RESOURCE; otherwise it says so and the machine's hard limit
 * bounds the run), and the proxy's connection bounds (`HTTP_MAX_CONNECTIONS`,
 * `AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN`) to fit.
 *
 *   pnpm --filter @agentnet/bench bench:streams
 *   BENCH_STREAMS=10000 pnpm --filter @agentnet/bench bench:streams
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { runBench } from "./bench-script";
import { type Exactness, settledExactness } from "./exactness";
import { percentile } from "./percentile";
import { requestBody } from "./proxy-load";
import {
  createBenchAccount,
  startBenchBackends,
  startConsumptionProcess,
  startMockUpstream,
  startNodeFloor,
  startProxyProcess,
  stopChildren,
} from "./proxy-stack";

const STREAMS = Number(process.env.BENCH_STREAMS ?? 2_000);
const STREAM_SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 60);
/** Streams opened per second: a burst of thousands of connects at once measures the kernel's backlog. */
const OPEN_PER_SECOND = Number(process.env.BENCH_STREAMS_OPEN_PER_SECOND ?? 1_000);
/** Fresh requests timed idle and while the streams are open, one at a time on one connection. */
const FRESH_REQUESTS = Number(process.env.BENCH_FRESH_REQUESTS ?? 300);
const AGENTNET = "agentnet";
/** bench:proxy's bare Node proxy (node-floor.ts): what any Node gateway adds with the same streams open. */
const NODE_FLOOR = "node floor";
/**
 * agentnet's account is capped (a limit so large it never binds: every request holds on the leases
 * and every stream grows its hold as it goes); `BENCH_UNCAPPED=1` measures it without.
 */
const CAPPED = process.env.BENCH_UNCAPPED !== "1";
/** Both by default, agentnet first; the run takes one stream length per target. */
const TARGETS = (process.env.BENCH_TARGETS ?? `${AGENTNET},${NODE_FLOOR}`)
  .split(",")
  .map((name) => name.trim());
/** Open files for this process, the proxy and the upstream: two per stream and some to spare. */
const OPEN_FILES = 2 * STREAMS + 4_096;

/**
 * Whether this process may raise its open-file limit to `OPEN_FILES` (raising the hard limit takes
 * CAP_SYS_RESOURCE). When not, every process keeps the machine's hard limit (Node raises its soft
 * limit to it), which bounds the streams one proxy can hold at about half of it.
 */
function raiseOpenFiles(): boolean {
  try {
    execFileSync("prlimit", ["--pid", String(process.pid), `--nofile=${OPEN_FILES}:${OPEN_FILES}`], {
      stdio: "pipe",
    });
    return true;
  } catch (error) {
    const hard = execFileSync("prlimit", [
      "--pid",
      String(process.pid),
      "--nofile",
      "--raw",
      "--noheadings",
      "-o",
      "HARD",
    ])
      .toString()
      .trim();
    process.stdout.write(
      `open files: ${OPEN_FILES} wanted, the hard limit stays ${hard} (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}): a proxy holds two per stream\n`,
    );
    return false;
  }
}

/** The sample's p50 and p99 of `count` requests, one at a time on one keep-alive connection, in ms. */
async function sequentialLatency(url: string, headers: Record<string, string>, count: number) {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 1 });
  const samples: number[] = [];
  let failed = 0;
  try {
    for (let index = 0; index < count; index++) {
      const started = performance.now();
      const answer = await pool.request({
        method: "POST",
        path: target.pathname,
        headers: { "content-type": "application/json", ...headers },
        body: requestBody(false),
      });
      await answer.body.text();
      samples.push(performance.now() - started);
      if (answer.statusCode !== 200) failed++;
    }
  } finally {
    await pool.close();
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99), failed };
}

interface Gauges {
  rss: number;
  heapUsed: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** The process's CPU time (user and system) since it started. */
  cpuSeconds: number;
}

/** The proxy's own gauges, from its metrics listener. */
async function proxyGauges(metricsUrl: string): Promise<Gauges> {
  const text = await (await fetch(metricsUrl)).text();
  const gauge = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1]);
  return {
    rss: gauge("process_resident_memory_bytes"),
    heapUsed: gauge("nodejs_heap_size_used_bytes"),
    lagP99Ms: gauge("nodejs_eventloop_lag_p99_seconds") * 1000,
    lagMaxMs: gauge("nodejs_eventloop_lag_max_seconds") * 1000,
    cpuSeconds: gauge("process_cpu_seconds_total"),
  };
}

/** The node floor's gauges, the same ones (`GET /stats`, node-floor.ts). */
async function floorGauges(statsUrl: string): Promise<Gauges> {
  return (await (await fetch(statsUrl)).json()) as Gauges;
}

interface StreamOutcome {
  status: number;
  /** When its answer's headers came, since the stream was sent (ms). */
  headersMs: number;
  events: number;
}

/** A gateway the streams go through: agentnet, or the node floor beside it. */
interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  gauges: () => Promise<Gauges>;
  process: ChildProcess;
}

type Latency = Awaited<ReturnType<typeof sequentialLatency>>;

interface TargetRun {
  target: Target;
  opened: number;
  answered: number;
  headersMs: number[];
  idle: Gauges;
  busy: Gauges;
  /** Its share of one core while the fresh requests ran beside the open streams. */
  busyCpuShare: number;
  idleDirect: Latency;
  idleTarget: Latency;
  busyDirect: Latency;
  busyTarget: Latency;
  measuredWhileOpen: boolean;
  /** The fresh requests it answered 2xx (its warm-up's, idle and while the streams were open). */
  freshServed: number;
}

/**
 * One target's run: warmed up, its fresh requests' latency idle (beside the same requests sent
 * directly), `STREAMS` streams opened through it, the fresh requests again while they are all open,
 * its gauges idle and open; then every stream waited for to its end.
 */
async function runTarget(target: Target, direct: string): Promise<TargetRun> {
  const directHeaders = { authorization: "Bearer sk-bench" };
  const warmUp = await sequentialLatency(target.url, target.headers, FRESH_REQUESTS);
  const idleDirect = await sequentialLatency(direct, directHeaders, FRESH_REQUESTS);
  const idleTarget = await sequentialLatency(target.url, target.headers, FRESH_REQUESTS);
  const idle = await target.gauges();

  process.stdout.write(
    `${target.name}: opening ${STREAMS} streams of ${STREAM_SECONDS} s, ${OPEN_PER_SECOND}/s\n`,
  );
  const origin = new URL(target.url);
  const streamsPool = new Pool(origin.origin, { connections: STREAMS });
  try {
    const opened = { headers: 0 };
    const streams: Promise<StreamOutcome>[] = [];
    for (let index = 0; index < STREAMS; index++) {
      if (index > 0 && index % Math.max(1, Math.round(OPEN_PER_SECOND / 10)) === 0) {
        await sleep(100);
      }
      const sent = performance.now();
      streams.push(
        streamsPool
          .request({
            method: "POST",
            path: origin.pathname,
            headers: { "content-type": "application/json", ...target.headers },
            body: requestBody(true),
            headersTimeout: 0,
            bodyTimeout: 0,
          })
          .then(async (answer) => {
            const headersMs = performance.now() - sent;
            opened.headers++;
            let events = 0;
            for await (const chunk of answer.body) events += String(chunk).split("data: ").length - 1;
            return { status: answer.statusCode, headersMs, events };
          })
          .catch(() => ({ status: 0, headersMs: performance.now() - sent, events: 0 })),
      );
    }
    const allOpenBy = Date.now() + 60_000;
    while (opened.headers < STREAMS && Date.now() < allOpenBy) {
      await sleep(200);
    }
    const openAt = performance.now();
    process.stdout.write(`${target.name}: ${opened.headers} of ${STREAMS} streams answered their headers\n`);

    // All open: the fresh requests between two reads of the gauges (the event-loop delay and CPU
    // time between them).
    const before = await target.gauges();
    const busySince = performance.now();
    const busyDirect = await sequentialLatency(direct, directHeaders, FRESH_REQUESTS);
    const busyTarget = await sequentialLatency(target.url, target.headers, FRESH_REQUESTS);
    const busy = await target.gauges();
    const busyCpuShare = (busy.cpuSeconds - before.cpuSeconds) / ((performance.now() - busySince) / 1000);
    const measuredWhileOpen = (performance.now() - openAt) / 1000 < STREAM_SECONDS - 5;

    const outcomes = await Promise.all(streams);
    return {
      target,
      opened: opened.headers,
      answered: outcomes.filter((outcome) => outcome.status === 200 && outcome.events >= STREAM_SECONDS)
        .length,
      headersMs: outcomes.map((outcome) => outcome.headersMs).sort((a, b) => a - b),
      idle,
      busy,
      busyCpuShare,
      idleDirect,
      idleTarget,
      busyDirect,
      busyTarget,
      measuredWhileOpen,
      freshServed: [warmUp, idleTarget, busyTarget].reduce(
        (served, sample) => served + FRESH_REQUESTS - sample.failed,
        0,
      ),
    };
  } finally {
    await streamsPool.destroy();
  }
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const ms = (latency: Latency) => `${latency.p50.toFixed(2)} / ${latency.p99.toFixed(2)}`;
const added = (target: Latency, direct: Latency) =>
  `${(target.p50 - direct.p50).toFixed(2)} / ${(target.p99 - direct.p99).toFixed(2)}`;

function report(runs: readonly TargetRun[]): string {
  const lines = [
    "",
    `| target | streams open at once | answered whole | time to headers p50 / p99 / max (ms) | RSS idle → open (MB) | per open stream | heap used idle → open (MB) | per open stream | event-loop delay p99 / max while open (ms) | CPU while open |`,
    "|---|---|---|---|---|---|---|---|---|---|",
    ...runs.map(
      ({ target, opened, answered, headersMs, idle, busy, busyCpuShare }) =>
        `| ${target.name} | ${opened} of ${STREAMS} | ${answered} | ${percentile(headersMs, 0.5).toFixed(1)} / ${percentile(headersMs, 0.99).toFixed(1)} / ${(headersMs.at(-1) ?? 0).toFixed(1)} | ${mb(idle.rss)} → ${mb(busy.rss)} | ${kb((busy.rss - idle.rss) / STREAMS)} KB | ${mb(idle.heapUsed)} → ${mb(busy.heapUsed)} | ${kb((busy.heapUsed - idle.heapUsed) / STREAMS)} KB | ${busy.lagP99Ms.toFixed(1)} / ${busy.lagMaxMs.toFixed(1)} | ${(100 * busyCpuShare).toFixed(0)} % |`,
    ),
    "",
    "| target | fresh requests (one at a time) | direct p50 / p99 (ms) | through the target p50 / p99 (ms) | added p50 / p99 (ms) | failed |",
    "|---|---|---|---|---|---|",
  ];
  for (const run of runs) {
    const open = `${run.opened} streams open${run.measuredWhileOpen ? "" : " (some had ended)"}`;
    lines.push(
      `| ${run.target.name} | idle | ${ms(run.idleDirect)} | ${ms(run.idleTarget)} | ${added(run.idleTarget, run.idleDirect)} | ${run.idleTarget.failed} |`,
      `| ${run.target.name} | ${open} | ${ms(run.busyDirect)} | ${ms(run.busyTarget)} | ${added(run.busyTarget, run.busyDirect)} | ${run.busyTarget.failed} |`,
    );
  }
  return lines.join("\n");
}

async function main() {
  const raised = raiseOpenFiles();
  const withOpenFiles = (args: string[]) =>
    raised ? ["prlimit", `--nofile=${OPEN_FILES}:${OPEN_FILES}`, ...args] : args;
  const backends = await startBenchBackends("agentnet_bench_streams");
  const { nats, nc, sealingText } = backends;
  const children: ChildProcess[] = [];
  try {
    const upstream = await startMockUpstream(
      { MOCK_STREAM_EVENTS: String(STREAM_SECONDS), MOCK_STREAM_INTERVAL_MS: "1000" },
      withOpenFiles,
    );
    children.push(upstream.child);
    children.push(
      await startConsumptionProcess({
        name: "consumption",
        busEnv: nats.serviceEnv("consumption"),
        mongoUrl: backends.databaseUrl,
        durable: `bench-streams-${Date.now()}`,
      }),
    );
    const connections = String(STREAMS + 1_024);
    const proxy = await startProxyProcess({
      name: AGENTNET,
      busEnv: nats.serviceEnv("gateway-proxy"),
      sealingText,
      upstreamPort: upstream.port,
      metrics: true,
      env: { HTTP_MAX_CONNECTIONS: connections, AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN: connections },
      wrap: withOpenFiles,
    });
    children.push(proxy.child);
    const floor = await startNodeFloor(upstream.url, {
      wrap: withOpenFiles,
      upstreamConnections: STREAMS + 1_024,
    });
    children.push(floor.child);
    const account = await createBenchAccount(nc, upstream.url, CAPPED);
    const targets: Target[] = [
      {
        name: AGENTNET,
        url: proxy.url,
        headers: { authorization: `Bearer ${account.token}` },
        gauges: () => proxyGauges(proxy.metricsUrl ?? ""),
        process: proxy.child,
      },
      {
        name: NODE_FLOOR,
        url: floor.url,
        headers: { authorization: "Bearer sk-bench" },
        gauges: () => floorGauges(floor.statsUrl),
        process: floor.child,
      },
    ];
    const direct = `${upstream.url}/v1/chat/completions`;

    // One target at a time, each stopped after its run: its keep-alive connections to the upstream
    // close with it, or the next one's streams would find the upstream out of file descriptors.
    const runs: TargetRun[] = [];
    let books: Exactness | undefined;
    for (const target of targets.filter((each) => TARGETS.includes(each.name))) {
      const run = await runTarget(target, direct);
      runs.push(run);
      if (target.name === AGENTNET) {
        books = await settledExactness(nc, {
          account,
          capped: CAPPED,
          served: run.answered + run.freshServed,
        });
      }
      await stopChildren([target.process]);
    }

    const lines = [report(runs), ""];
    const agentnet = runs.find((run) => run.target.name === AGENTNET);
    const nodeFloor = runs.find((run) => run.target.name === NODE_FLOOR);
    if (agentnet && nodeFloor) {
      const addedP99 = (run: TargetRun) => run.busyTarget.p99 - run.busyDirect.p99;
      lines.push(
        `added p99 while the streams are open, agentnet − node floor: ${(addedP99(agentnet) - addedP99(nodeFloor)).toFixed(2)} ms`,
        "",
      );
    }
    if (books) {
      lines.push(
        `agentnet: events in the request stream ${books.events} for ${books.served} requests served; counters ${books.counters.map((counter) => `${counter.dimension} ${counter.input} in / ${counter.output} out`).join(", ")}; exact: ${books.exact}`,
        "",
      );
    }
    process.stdout.write(`${lines.join("\n")}\n`);
    const exact = books?.exact ?? true;
    if (!exact || runs.some((run) => run.answered !== STREAMS)) process.exitCode = 1;
  } finally {
    await stopChildren(children);
    await backends.stop();
  }
}

runBench(main);
