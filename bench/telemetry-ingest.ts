/**
 * Telemetry ingest benchmark on chDB, through JetStream.
 *
 * 1. Drain: BENCH_EVENTS (1,000,000) events are published to the stream first; then telemetry
 *    starts with a fresh durable consumer and we time until every row is stored.
 * 2. End to end: one Node publisher with acks, in its own process as the gateway proxy is
 *    (telemetry-publisher.ts), publishes BENCH_E2E_EVENTS (200,000) as fast as it can while
 *    telemetry consumes; ingest keeps up when "until stored" matches the publish rate.
 * Both check zero loss and zero duplicates in the stored rows and sample RSS (peak) as they run.
 *
 *   pnpm --filter @agentnet/bench bench:telemetry     # this, then telemetry-reads.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { deleteDurableConsumer, ensureRequestStream } from "@agentnet/bus";
import { openWarehouse, type Warehouse } from "@agentnet/clickhouse";
import { Events } from "@agentnet/contracts";
import { createLogger, newId } from "@agentnet/service-kit";
import { startTelemetry } from "@agentnet/telemetry/app";
import { spawnBenchScript } from "./bench-script";
import { startBenchNats } from "./bus";
import { publishEvents } from "./telemetry-events";

const N = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const E2E = Number(process.env.BENCH_E2E_EVENTS ?? 200_000);

/**
 * Runs telemetry-publisher.ts in its own process; `onProgress` hears its acked counts as it goes.
 * Resolves once it has published everything, with the publisher's own time.
 */
function publishFromChild(
  busEnv: Record<string, string>,
  accountId: string,
  count: number,
  window: number,
  onProgress: (published: number) => void,
) {
  const child = spawnBenchScript("telemetry-publisher.ts", {
    ...busEnv,
    BENCH_ACCOUNT: accountId,
    BENCH_COUNT: String(count),
    BENCH_WINDOW: String(window),
  });
  let publishMs: number | undefined;
  createInterface({ input: child.stdout ?? process.stdin }).on("line", (line) => {
    const report: { published?: number; publishMs?: number } = JSON.parse(line);
    if (report.published !== undefined) onProgress(report.published);
    if (report.publishMs !== undefined) publishMs = report.publishMs;
  });
  return new Promise<{ publishMs: number }>((resolve, reject) => {
    child.once("exit", (code) => {
      if (code !== 0 || publishMs === undefined) reject(new Error(`the publisher exited with ${code}`));
      else resolve({ publishMs });
    });
  });
}

/** Stored rows as written (no FINAL): with nothing redelivered, any duplicate is a bug. */
async function storedCounts(warehouse: Warehouse, accountId: string) {
  const [row] = await warehouse.query<{ usage: string; ids: string; logs: string }>(
    `SELECT
       (SELECT count() FROM usage_events WHERE account_id = {a:String}) AS usage,
       (SELECT uniqExact(id) FROM usage_events WHERE account_id = {a:String}) AS ids,
       (SELECT count() FROM access_logs WHERE account_id = {a:String}) AS logs`,
    { a: accountId },
  );
  return { usage: Number(row?.usage), ids: Number(row?.ids), logs: Number(row?.logs) };
}

async function storedCount(warehouse: Warehouse, accountId: string) {
  const [row] = await warehouse.query<{ n: string }>(
    "SELECT count() AS n FROM usage_events WHERE account_id = {a:String}",
    { a: accountId },
  );
  return Number(row?.n);
}

async function waitStored(warehouse: Warehouse, accountId: string, count: number) {
  for (;;) {
    if ((await storedCount(warehouse, accountId)) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Peak RSS while `run` runs, sampled every 100 ms. */
async function withPeakRss<T>(run: () => Promise<T>): Promise<{ result: T; peakMiB: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 100);
  try {
    const result = await run();
    return { result, peakMiB: Math.round(Math.max(peak, process.memoryUsage().rss) / 2 ** 20) };
  } finally {
    clearInterval(timer);
  }
}

function report(label: string, count: number, stored: Awaited<ReturnType<typeof storedCounts>>) {
  const logged = Array.from({ length: count }, (_, i) => i % 10 !== 0).filter(Boolean).length;
  const ok = stored.usage === count && stored.ids === count && stored.logs === logged;
  console.log(
    `${label.padEnd(36)} usage rows ${stored.usage}, distinct ids ${stored.ids}, access-log rows ${stored.logs} ` +
      `(expected ${count}/${count}/${logged}) ${ok ? "OK: no loss, no duplicates" : "MISMATCH"}`,
  );
}

const logger = createLogger("bench", "warn");
const nats = await startBenchNats();
// Pre-fill and clean-up as an operator; telemetry consumes as itself.
const nc = await nats.connectOperator("bench-telemetry");
const telemetryBus = await nats.connectAs("telemetry");
await ensureRequestStream(nc, [Events.requestsAll]);
const dataDir = mkdtempSync(join(tmpdir(), "agn-bench-telemetry-"));
const warehouse = await openWarehouse({ dataDir, database: "agentnet" });
console.log(
  `load average before: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(", ")}`,
);

// 1. Drain a pre-filled stream (the pre-fill uses a wide publish window; its rate is not the point).
const drained = `bench_${newId()}`;
const prefillMs = await publishEvents(nc, drained, N, 4096);
console.log(`pre-filled ${N} events in ${(prefillMs / 1000).toFixed(1)} s`);
const drainDurable = `bench-${newId()}`;
const drain = await withPeakRss(async () => {
  const started = performance.now();
  const telemetry = await startTelemetry({
    nc: telemetryBus,
    warehouse,
    logger,
    options: {
      durable: drainDurable,
      filterSubject: Events.requests(drained),
      deliver: "all",
      retentionIntervalMs: 0,
    },
  });
  await waitStored(warehouse, drained, N);
  const ms = performance.now() - started;
  await telemetry.stop();
  return ms;
});
await deleteDurableConsumer(nc, drainDurable);
console.log(
  `drain of a pre-filled stream         ${Math.round(N / (drain.result / 1000))} events/s ` +
    `(${N} in ${(drain.result / 1000).toFixed(1)} s), peak RSS ${drain.peakMiB} MiB`,
);
report("  stored", N, await storedCounts(warehouse, drained));

// 2. End to end: telemetry consumes while one publisher publishes at its own maximum rate.
const live = `bench_${newId()}`;
const liveDurable = `bench-${newId()}`;
const telemetry = await startTelemetry({
  nc: telemetryBus,
  warehouse,
  logger,
  options: {
    durable: liveDurable,
    filterSubject: Events.requests(live),
    deliver: "new",
    retentionIntervalMs: 0,
  },
});
// Backlog (acked by the stream, not yet stored) each time another 10,000 are acked: flat when
// ingest keeps up, growing when it falls behind.
const backlogs: Promise<number>[] = [];
const e2e = await withPeakRss(async () => {
  const { publishMs } = await publishFromChild(
    nats.serviceEnv("gateway-proxy"),
    live,
    E2E,
    512,
    (published) => backlogs.push(storedCount(warehouse, live).then((stored) => published - stored)),
  );
  const publishedAt = performance.now();
  await waitStored(warehouse, live, E2E);
  const lagMs = performance.now() - publishedAt;
  return { publishMs, totalMs: publishMs + lagMs, lagMs };
});
await telemetry.stop();
await deleteDurableConsumer(nc, liveDurable);
console.log(
  `publish, 1 publisher with acks       ${Math.round(E2E / (e2e.result.publishMs / 1000))} events/s`,
);
console.log(
  `end to end until stored              ${Math.round(E2E / (e2e.result.totalMs / 1000))} events/s ` +
    `(stored ${e2e.result.lagMs.toFixed(0)} ms after the last publish), peak RSS ${e2e.peakMiB} MiB`,
);
console.log(
  `  backlog per 10,000 published       ${(await Promise.all(backlogs)).map((n) => (n / 1000).toFixed(1)).join(" ")} (thousands of events)`,
);
report("  stored", E2E, await storedCounts(warehouse, live));
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(", ")}`,
);

await telemetryBus.drain();
await nc.drain();
await nats.stop();
await warehouse.close();
rmSync(dataDir, { recursive: true, force: true });
await nats.stop();
