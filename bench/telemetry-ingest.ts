/**
 * Telemetry ingest and read benchmark on chDB. Publishes N realistic gateway request events
 * (50 users, 30 days, sessions, 10 % unlogged) to JetStream while telemetry consumes them and
 * measures events/s until every row is queryable; then drains a pre-filled stream with a fresh
 * consumer; then times the service's own queries (p50/p95 of 20 runs) over those rows.
 *
 *   pnpm --filter @agentnet/bench bench:telemetry          # N=50000
 *   BENCH_EVENTS=200000 pnpm --filter @agentnet/bench bench:telemetry
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectBus, deleteDurableConsumer, ensureRequestStream, type NatsConnection } from "@agentnet/bus";
import { openWarehouse, type Warehouse } from "@agentnet/clickhouse";
import { Events, type GatewayRequestEvent } from "@agentnet/contracts";
import { defaultDataDir, ensureNats } from "@agentnet/local-backends";
import { createLogger, newId } from "@agentnet/service-kit";
import { startTelemetry } from "@agentnet/telemetry/app";
import {
  accessLogCount,
  accessLogPage,
  sessionCount,
  sessionPage,
  usageOverview,
} from "@agentnet/telemetry/store";
import { jetstream } from "@nats-io/jetstream";

const N = Number(process.env.BENCH_EVENTS ?? 50_000);
const DAY = 86_400_000;
const MODELS = ["gpt-4o", "gpt-4o-mini", "claude-sonnet-4", "claude-haiku", "mistral-large"];

function makeEvents(accountId: string, count: number, now: number): GatewayRequestEvent[] {
  const events: GatewayRequestEvent[] = [];
  for (let i = 0; i < count; i++) {
    const user = i % 50;
    const model = MODELS[i % MODELS.length] ?? "gpt-4o";
    const input = 200 + (i % 900);
    const output = 50 + (i % 300);
    const denied = i % 97 === 0;
    const logged = i % 10 !== 0;
    events.push({
      v: 1,
      id: `${accountId}-${i}`,
      account_id: accountId,
      service_id: "svc_agent_network",
      timestamp: new Date(now - Math.floor((i / count) * 30 * DAY)).toISOString(),
      status_code: denied ? 429 : 200,
      duration_ms: 300 + (i % 2000),
      user_id: `user_${user}`,
      user_email: `user${user}@corp.example`,
      user_name: `User ${user}`,
      source_ip: logged ? `10.0.${user}.7` : "",
      method: "POST",
      host: logged ? "api.openai.com" : "",
      path: logged ? "/v1/chat/completions" : "",
      provider: model.startsWith("claude") ? "anthropic" : "openai",
      model,
      session_id: i % 4 === 0 ? "" : `sess_${user}_${Math.floor(i / 40)}`,
      resolved_provider_id: `prov_${i % 3}`,
      selected_policy_id: "pol_default",
      decision: denied ? "deny" : "allow",
      deny_reason: denied ? "llm_policy.token_cap_exceeded" : "",
      input_tokens: denied ? 0 : input,
      output_tokens: denied ? 0 : output,
      total_tokens: denied ? 0 : input + output,
      cached_input_tokens: 0,
      cache_creation_tokens: 0,
      cost_usd: denied ? 0 : (input * 2500 + output * 10000) / 1e9,
      input_cost_usd: denied ? 0 : (input * 2500) / 1e9,
      cached_input_cost_usd: 0,
      cache_creation_cost_usd: 0,
      output_cost_usd: denied ? 0 : (output * 10000) / 1e9,
      cache_cost_usd: 0,
      stream: i % 2 === 0,
      group_ids: [`grp_${user % 5}`, "grp_all"],
      ...(i % 20 === 0 ? { request_prompt: "Refactor this function to ".repeat(8) } : {}),
      logged,
    });
  }
  return events;
}

/** Publishes with acks, keeping a window of publishes in flight (one Node publisher). */
async function publishAll(nc: NatsConnection, events: GatewayRequestEvent[]): Promise<number> {
  const js = jetstream(nc);
  const started = performance.now();
  const window = 512;
  for (let i = 0; i < events.length; i += window) {
    await Promise.all(
      events
        .slice(i, i + window)
        .map((e) => js.publish(Events.requests(e.account_id), JSON.stringify(e), { msgID: e.id })),
    );
  }
  return performance.now() - started;
}

async function stored(warehouse: Warehouse, accountId: string): Promise<number> {
  const [row] = await warehouse.query<{ n: string }>(
    "SELECT uniqExact(id) AS n FROM usage_events WHERE account_id = {a:String}",
    { a: accountId },
  );
  return Number(row?.n ?? 0);
}

async function waitStored(warehouse: Warehouse, accountId: string, count: number) {
  while ((await stored(warehouse, accountId)) < count) await new Promise((r) => setTimeout(r, 50));
}

async function timeQuery(label: string, run: () => Promise<unknown>) {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => (times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0).toFixed(1);
  console.log(`${label.padEnd(34)} p50 ${at(0.5)} ms  p95 ${at(0.95)} ms`);
}

const logger = createLogger("bench", "warn");
const nats = await ensureNats({
  url: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
  dataDir: join(defaultDataDir(), "bench"),
});
const nc = await connectBus({ url: nats.url, name: "bench-telemetry" });
await ensureRequestStream(nc, [Events.requestsAll]);
const dataDir = mkdtempSync(join(tmpdir(), "agn-bench-telemetry-"));
const warehouse = await openWarehouse({ dataDir, database: "agentnet" });
const now = Date.now();

// 1. End to end: telemetry consumes while the publisher publishes.
const live = `bench_${newId()}`;
const liveDurable = `bench-${newId()}`;
const telemetry = await startTelemetry({
  nc,
  warehouse,
  logger,
  options: {
    durable: liveDurable,
    filterSubject: Events.requests(live),
    deliver: "new",
    retentionIntervalMs: 0,
  },
});
const liveEvents = makeEvents(live, N, now);
const e2eStart = performance.now();
const publishMs = await publishAll(nc, liveEvents);
await waitStored(warehouse, live, N);
const e2eMs = performance.now() - e2eStart;
await telemetry.stop();
await deleteDurableConsumer(nc, liveDurable);
const memory = Math.round(process.memoryUsage().rss / 2 ** 20);
console.log(`events                              ${N}`);
console.log(`publish (acked, 1 publisher)        ${Math.round(N / (publishMs / 1000))} events/s`);
console.log(
  `end to end until queryable          ${Math.round(N / (e2eMs / 1000))} events/s (${(e2eMs / 1000).toFixed(1)} s)`,
);

// 2. Drain: the stream already holds N events of another account; a fresh consumer reads them.
const drained = `bench_${newId()}`;
await publishAll(nc, makeEvents(drained, N, now));
const drainDurable = `bench-${newId()}`;
const drainStart = performance.now();
const drainer = await startTelemetry({
  nc,
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
const drainMs = performance.now() - drainStart;
await drainer.stop();
await deleteDurableConsumer(nc, drainDurable);
console.log(
  `drain of a pre-filled stream        ${Math.round(N / (drainMs / 1000))} events/s (${(drainMs / 1000).toFixed(1)} s)`,
);
console.log(`rss after ingest                    ${memory} MiB`);

// 3. Reads over one account's N events (the service's own query factories).
const filters = { account_id: live };
const page = { sort_by: "timestamp" as const, sort_order: "descending" as const, limit: 50, offset: 0 };
const month = { start_date: new Date(now - 30 * DAY).toISOString(), end_date: new Date(now).toISOString() };
await timeQuery("access-logs page 1 (+count)", () =>
  Promise.all([
    accessLogPage.run(warehouse, { ...filters, ...page }),
    accessLogCount.run(warehouse, filters),
  ]),
);
const filtered = { ...filters, model: ["claude-sonnet-4"], user_id: "user_7", search: "corp" };
await timeQuery("access-logs page 1, filtered+search", () =>
  Promise.all([
    accessLogPage.run(warehouse, { ...filtered, ...page }),
    accessLogCount.run(warehouse, filtered),
  ]),
);
await timeQuery("sessions page 1 (+count)", () =>
  Promise.all([
    sessionPage.run(warehouse, {
      ...filters,
      sort_column: "ended_at",
      sort_order: "descending",
      limit: 50,
      offset: 0,
    }),
    sessionCount.run(warehouse, filters),
  ]),
);
await timeQuery("usage overview, 30 days by day", () =>
  usageOverview.run(warehouse, { ...filters, ...month, granularity: "day" }),
);
await timeQuery("usage overview, 30 days by hour", () =>
  usageOverview.run(warehouse, { ...filters, ...month, granularity: "hour" }),
);

await nc.drain();
await warehouse.close();
rmSync(dataDir, { recursive: true, force: true });
await nats.stop();
