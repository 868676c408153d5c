/**
 * Telemetry read benchmark on chDB: BENCH_READ_ROWS (5,000,000) events of one account (50 users,
 * 30 days, see telemetry-events.ts) are written through the service's own insert path
 * (`insertEvents`, in batches of 50,000; no JetStream, which telemetry-ingest.ts measures), usage is
 * rolled into hours as the service's periodic roll does, then the reads the API runs are timed,
 * BENCH_RUNS (60) times each, p50/p95 reported: straight after the load, and again once the
 * engine's background merges of the load are done and it has merged each past day of
 * access_logs_by_user into one part (as in tables that have been serving a while).
 *
 *   pnpm --filter @agentnet/bench bench:telemetry-reads
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { MIGRATIONS_DIR, openWarehouse, runMigrations } from "@agentnet/clickhouse";
import type { GatewayRequestEvent } from "@agentnet/contracts";
import { newId } from "@agentnet/service-kit";
import {
  accessLogCount,
  insertEvents,
  previewChars,
  readAccessLogPage,
  readSessionPage,
  readUsageBreakdown,
  readUsageOverview,
  readUsageSeries,
  replyBudget,
  rollHours,
  sessionCount,
} from "@agentnet/telemetry/store";
import { DAY, makeEvent, percentiles } from "./telemetry-events";

const ROWS = Number(process.env.BENCH_READ_ROWS ?? 5_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const BATCH = 50_000;

const dataDir = mkdtempSync(join(tmpdir(), "agn-bench-reads-"));
const warehouse = await openWarehouse({ dataDir, database: "agentnet" });
await runMigrations(warehouse, MIGRATIONS_DIR);
const account = `bench_${newId()}`;
const now = Date.now();
console.log(
  `load average before: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(", ")}`,
);

// Oldest first, as a live gateway would have written them.
const fillStart = performance.now();
for (let end = ROWS; end > 0; end -= BATCH) {
  const batch: GatewayRequestEvent[] = [];
  for (let i = end - 1; i >= Math.max(0, end - BATCH); i--) batch.push(makeEvent(account, i, ROWS, now));
  await insertEvents(warehouse, batch);
}
const [stored] = await warehouse.query<{ logs: string; usage: string; parts: string }>(
  `SELECT (SELECT count() FROM access_logs) AS logs, (SELECT count() FROM usage_events) AS usage,
     (SELECT count() FROM system.parts WHERE database = currentDatabase() AND active) AS parts`,
);
console.log(
  `wrote ${ROWS} events in ${((performance.now() - fillStart) / 1000).toFixed(1)} s: ` +
    `${stored?.logs} access-log rows, ${stored?.usage} usage rows, ${stored?.parts} active parts`,
);
// What the service's periodic roll does once it has caught up: every hour older than ~10 minutes.
const rollStart = performance.now();
await rollHours(warehouse);
console.log(
  `rolled 30 days of usage and log counts into hours in ${((performance.now() - rollStart) / 1000).toFixed(1)} s`,
);

async function time(label: string, run: () => Promise<unknown>) {
  await run(); // warm-up: marks and caches, as on a serving process
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  const { p50, p95 } = percentiles(times);
  const verdict = p95 < 150 ? "ok" : "MISSES 150 ms";
  console.log(
    `${label.padEnd(46)} p50 ${p50.toFixed(0).padStart(4)} ms  p95 ${p95.toFixed(0).padStart(4)} ms  ${verdict}`,
  );
}

/** The reply budget of nats-server's default max_payload (1 MiB), as the handlers size pages. */
const budget = replyBudget(1024 * 1024);

/** What the access-logs handler does: count alongside the page. */
const logsPage = (filters: Parameters<typeof accessLogCount.run>[1]) => {
  const total = accessLogCount.run(warehouse, filters).then((rows) => rows[0]?.total ?? 0);
  const page = {
    sort_by: "timestamp" as const,
    sort_order: "descending" as const,
    limit: 50,
    offset: 0,
    preview_chars: previewChars(budget, 50),
  };
  return Promise.all([readAccessLogPage(warehouse, { ...filters, ...page }, total), total]);
};

/** The sessions handler's page: 50 sessions, newest first, with their entries. */
const sessionsPageOnly = (filters: Parameters<typeof sessionCount.run>[1]) =>
  readSessionPage(warehouse, {
    ...filters,
    sort_column: "ended_at",
    sort_order: "descending",
    limit: 50,
    offset: 0,
    budget,
  });

/** What the sessions handler does: the page and the count together. */
const sessionsPage = (filters: Parameters<typeof sessionCount.run>[1]) =>
  Promise.all([sessionsPageOnly(filters), sessionCount.run(warehouse, filters)]);

const all = { account_id: account };
const filtered = { ...all, user_id: "user_7", model: ["claude-sonnet-4"], search: "corp" };
const month = { start_date: new Date(now - 30 * DAY).toISOString(), end_date: new Date(now).toISOString() };
const timeReads = async () => {
  await time("access-logs page 1 + count", () => logsPage(all));
  await time("access-logs page 1 + count, user+model+search", () => logsPage(filtered));
  await time("sessions page 1 (with entries) + count", () => sessionsPage(all));
  // Its two halves alone, to say which one the page waits for.
  await time("  sessions page 1 (with entries) alone", () => sessionsPageOnly(all));
  await time("  sessions count alone", () => sessionCount.run(warehouse, all));
  await time("usage overview, 30 days by day", () =>
    readUsageOverview(warehouse, { ...all, ...month, granularity: "day" }),
  );
  await time("usage overview, 30 days by hour", () =>
    readUsageOverview(warehouse, { ...all, ...month, granularity: "hour" }),
  );
  await time("usage series, 30 days by hour", () =>
    readUsageSeries(warehouse, { ...all, ...month, granularity: "hour" }),
  );
  await time("usage breakdown by model, 30 days", () =>
    readUsageBreakdown(warehouse, { ...all, ...month, by: "model" }),
  );
  await time("usage breakdown by group, 30 days", () =>
    readUsageBreakdown(warehouse, { ...all, ...month, by: "group" }),
  );
};

const activeParts = async () => {
  const [row] = await warehouse.query<{ parts: string; merges: string }>(
    `SELECT (SELECT count() FROM system.parts WHERE database = currentDatabase() AND active) AS parts,
       (SELECT count() FROM system.merges WHERE database = currentDatabase()) AS merges`,
  );
  return { parts: Number(row?.parts), merges: Number(row?.merges) };
};

console.log("straight after the load, background merges running:");
await timeReads();
// A serving table is merged continuously: measure again once the engine has merged the load, and
// has merged each past day of access_logs_by_user into one part, as its
// min_age_to_force_merge_seconds (infra/clickhouse/006_sooner_force_merge.sql) makes it do a
// minute after a day's last insert. Nothing is forced here; the wait is the engine's.
const settleStart = performance.now();
const today = new Date().toISOString().slice(0, 10).replaceAll("-", "");
const unmergedPastDays = async () => {
  const [row] = await warehouse.query<{ days: string }>(
    `SELECT count() AS days FROM (
       SELECT partition_id FROM system.parts
       WHERE database = currentDatabase() AND table = 'access_logs_by_user' AND active AND partition_id < {today:String}
       GROUP BY partition_id HAVING count() > 1)`,
    { today },
  );
  return Number(row?.days);
};
while (
  ((await activeParts()).merges > 0 || (await unmergedPastDays()) > 0) &&
  performance.now() - settleStart < 300_000
) {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
}
const settled = await activeParts();
console.log(
  `after ${((performance.now() - settleStart) / 1000).toFixed(0)} s of merging (${settled.parts} active parts, ` +
    `${settled.merges} merges running, ${await unmergedPastDays()} past days of access_logs_by_user in several parts):`,
);
await timeReads();
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(", ")}`,
);

await warehouse.close();
rmSync(dataDir, { recursive: true, force: true });
