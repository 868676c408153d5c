/**
 * Open streams on one proxy process (issue 39): `BENCH_STREAMS` concurrent streaming requests
 * (2,000 by default; the target is 10,000) through one gateway-proxy process to one upstream
 * origin that sends one small event a second for `BENCH_STREAM_SECONDS` (60). While they are all
 * open it measures the proxy's RSS and heap per open stream (against the same process idle), its
 * event-loop delay, and the latency of fresh non-streaming requests sent meanwhile, beside the same
 * requests sent directly to the upstream; afterwards, that every request has its event in the
 * request stream and the capped account's counters hold every token served.
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
import { Pool } from "undici";
import { runBench } from "./bench-script";
import { settledExactness } from "./exactness";
import { percentile } from "./percentile";
import { requestBody } from "./proxy-load";
import {
  createBenchAccount,
  startBenchBackends,
  startConsumptionProcess,
  startMockUpstream,
  startProxyProcess,
  stopChildren,
} from "./proxy-stack";

const STREAMS = Number(process.env.BENCH_STREAMS ?? 2_000);
const STREAM_SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 60);
/** Streams opened per second: a burst of thousands of connects at once measures the kernel's backlog. */
const OPEN_PER_SECOND = Number(process.env.BENCH_STREAMS_OPEN_PER_SECOND ?? 1_000);
/** Fresh requests timed idle and while the streams are open, one at a time on one connection. */
const FRESH_REQUESTS = Number(process.env.BENCH_FRESH_REQUESTS ?? 300);
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

/** The proxy's own gauges, from its metrics listener. */
async function proxyGauges(metricsUrl: string) {
  const text = await (await fetch(metricsUrl)).text();
  const gauge = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1]);
  return {
    rss: gauge("process_resident_memory_bytes"),
    heapUsed: gauge("nodejs_heap_size_used_bytes"),
    lagP99Ms: gauge("nodejs_eventloop_lag_p99_seconds") * 1000,
    lagMaxMs: gauge("nodejs_eventloop_lag_max_seconds") * 1000,
  };
}

interface StreamOutcome {
  status: number;
  /** When its answer's headers came, since the stream was sent (ms). */
  headersMs: number;
  events: number;
}

async function main() {
  const raised = raiseOpenFiles();
  const withOpenFiles = (args: string[]) =>
    raised ? ["prlimit", `--nofile=${OPEN_FILES}:${OPEN_FILES}`, ...args] : args;
  const backends = await startBenchBackends("agentnet_bench_streams");
  const { nats, nc, sealingText } = backends;
  const children: ChildProcess[] = [];
  let streamsPool: Pool | undefined;
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
    const proxy = await startProxyProcess({
      name: "agentnet",
      busEnv: nats.serviceEnv("gateway-proxy"),
      sealingText,
      upstreamPort: upstream.port,
      metrics: true,
      env: {
        HTTP_MAX_CONNECTIONS: String(STREAMS + 1_024),
        AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN: String(STREAMS + 1_024),
      },
      wrap: withOpenFiles,
    });
    children.push(proxy.child);
    const metricsUrl = proxy.metricsUrl ?? "";
    const account = await createBenchAccount(nc, upstream.url, true);
    const headers = { authorization: `Bearer ${account.token}` };
    const direct = `${upstream.url}/v1/chat/completions`;

    // Idle: the proxy warmed up, then its memory and the fresh requests' latency with nothing open.
    const warmUp = await sequentialLatency(proxy.url, headers, FRESH_REQUESTS);
    const idleDirect = await sequentialLatency(direct, { authorization: "Bearer sk-bench" }, FRESH_REQUESTS);
    const idleProxy = await sequentialLatency(proxy.url, headers, FRESH_REQUESTS);
    const idle = await proxyGauges(metricsUrl);

    process.stdout.write(`opening ${STREAMS} streams of ${STREAM_SECONDS} s, ${OPEN_PER_SECOND}/s\n`);
    const origin = new URL(proxy.url);
    streamsPool = new Pool(origin.origin, { connections: STREAMS });
    const opened = { headers: 0 };
    const streams: Promise<StreamOutcome>[] = [];
    for (let index = 0; index < STREAMS; index++) {
      if (index > 0 && index % Math.max(1, Math.round(OPEN_PER_SECOND / 10)) === 0) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const sent = performance.now();
      streams.push(
        streamsPool
          .request({
            method: "POST",
            path: origin.pathname,
            headers: { "content-type": "application/json", ...headers },
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
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const openAt = performance.now();
    process.stdout.write(`${opened.headers} of ${STREAMS} streams answered their headers\n`);

    // All open: the fresh requests, then the gauges (the event-loop delay since the idle scrape).
    await proxyGauges(metricsUrl);
    const busyDirect = await sequentialLatency(direct, { authorization: "Bearer sk-bench" }, FRESH_REQUESTS);
    const busyProxy = await sequentialLatency(proxy.url, headers, FRESH_REQUESTS);
    const busy = await proxyGauges(metricsUrl);
    const measuredWhileOpen = (performance.now() - openAt) / 1000 < STREAM_SECONDS - 5;

    const outcomes = await Promise.all(streams);
    const answered = outcomes.filter((outcome) => outcome.status === 200 && outcome.events >= STREAM_SECONDS);
    const headersMs = outcomes.map((outcome) => outcome.headersMs).sort((a, b) => a - b);
    const freshServed = [warmUp, idleProxy, busyProxy].reduce(
      (served, sample) => served + FRESH_REQUESTS - sample.failed,
      0,
    );
    const exact = await settledExactness(nc, {
      account,
      capped: true,
      served: answered.length + freshServed,
    });

    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
    const kb = (bytes: number) => (bytes / 1024).toFixed(1);
    process.stdout.write(
      [
        "",
        `| streams open at once | answered whole | time to headers p50 / p99 / max (ms) | proxy RSS idle → open (MB) | per open stream | heap used idle → open (MB) | per open stream | event-loop delay p99 / max while open (ms) |`,
        "|---|---|---|---|---|---|---|---|",
        `| ${opened.headers} of ${STREAMS} | ${answered.length} | ${percentile(headersMs, 0.5).toFixed(1)} / ${percentile(headersMs, 0.99).toFixed(1)} / ${(headersMs.at(-1) ?? 0).toFixed(1)} | ${mb(idle.rss)} → ${mb(busy.rss)} | ${kb((busy.rss - idle.rss) / STREAMS)} KB | ${mb(idle.heapUsed)} → ${mb(busy.heapUsed)} | ${kb((busy.heapUsed - idle.heapUsed) / STREAMS)} KB | ${busy.lagP99Ms.toFixed(1)} / ${busy.lagMaxMs.toFixed(1)} |`,
        "",
        "| fresh requests (one at a time) | direct p50 / p99 (ms) | agentnet p50 / p99 (ms) | added p50 / p99 (ms) | failed |",
        "|---|---|---|---|---|",
        `| idle | ${idleDirect.p50.toFixed(2)} / ${idleDirect.p99.toFixed(2)} | ${idleProxy.p50.toFixed(2)} / ${idleProxy.p99.toFixed(2)} | ${(idleProxy.p50 - idleDirect.p50).toFixed(2)} / ${(idleProxy.p99 - idleDirect.p99).toFixed(2)} | ${idleProxy.failed} |`,
        `| ${opened.headers} streams open${measuredWhileOpen ? "" : " (some had ended)"} | ${busyDirect.p50.toFixed(2)} / ${busyDirect.p99.toFixed(2)} | ${busyProxy.p50.toFixed(2)} / ${busyProxy.p99.toFixed(2)} | ${(busyProxy.p50 - busyDirect.p50).toFixed(2)} / ${(busyProxy.p99 - busyDirect.p99).toFixed(2)} | ${busyProxy.failed} |`,
        "",
        `events in the request stream ${exact.events} for ${exact.served} requests served; counters ${exact.counters.map((counter) => `${counter.dimension} ${counter.input} in / ${counter.output} out`).join(", ")}; exact: ${exact.exact}`,
        "",
      ].join("\n"),
    );
    if (!exact.exact || answered.length !== STREAMS) process.exitCode = 1;
  } finally {
    await streamsPool?.destroy();
    await stopChildren(children);
    await backends.stop();
  }
}

runBench(main);
