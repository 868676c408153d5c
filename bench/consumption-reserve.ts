/**
 * Consumption reservation benchmark on the local MongoDB-wire server (FerretDB unless MONGO_URL
 * says otherwise). Runs the consumption service in this process and calls `agn.consumption.reserve`
 * over NATS from a separate connection, as the gateway proxy would: first one caller in a loop, then
 * 50 concurrent callers (50 users of one source group, so the group counter is shared and hot).
 * Each request is capped by a policy (user + group token caps, far from binding) and one
 * account-wide budget rule (USD caps), i.e. 2 counters touched per reservation. Then it publishes one
 * settling event per admitted reservation and times how fast they are all counted.
 *
 *   pnpm --filter @agentnet/bench bench:consumption           # 300 sequential, 1,000 concurrent
 *   BENCH_RESERVATIONS=3000 pnpm --filter @agentnet/bench bench:consumption
 */
import { connectBus, deleteDurableConsumer, publishEvent, request } from "@agentnet/bus";
import { startConsumption } from "@agentnet/consumption/app";
import { Consumption, Events, type GatewayRequestEvent, type ReserveRequest } from "@agentnet/contracts";
import { defaultDataDir, ensureMongo, ensureNats } from "@agentnet/local-backends";
import { createLogger, newId } from "@agentnet/service-kit";
import mongoose from "mongoose";

const CONCURRENT = 50;
const TOTAL = Number(process.env.BENCH_RESERVATIONS ?? 1_000);
const SEQUENTIAL = Math.max(100, Math.floor(TOTAL * 0.3));

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

const limits = {
  token_limit: { enabled: true, user_cap: 10 ** 12, group_cap: 10 ** 12, window_seconds: 3600 },
  budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
};

function makeRequest(accountId: string, user: number): ReserveRequest {
  return {
    account_id: accountId,
    request_id: newId(),
    user_id: `user-${user}`,
    group_ids: ["all", "eng"],
    policy: { id: "policy", source_groups: ["eng"], limits },
    budget_rules: [
      {
        id: "rule",
        name: "account-wide",
        enabled: true,
        target_groups: [],
        target_users: [],
        limits: {
          token_limit: { enabled: false, user_cap: 0, group_cap: 0, window_seconds: 3600 },
          budget_limit: { enabled: true, user_cap_usd: 10 ** 6, group_cap_usd: 0, window_seconds: 3600 },
        },
        created_at: "2031-01-01T00:00:00Z",
        updated_at: "2031-01-01T00:00:00Z",
      },
    ],
    estimate: { input_tokens: 800, output_tokens: 4096, cost_usd: 0.05 },
  };
}

async function run() {
  const dataDir = defaultDataDir();
  const nats = await ensureNats({ url: process.env.NATS_URL ?? "nats://127.0.0.1:4222", dataDir });
  const mongo = await ensureMongo({
    url: process.env.MONGO_URL ?? "mongodb://127.0.0.1:27017/agentnet",
    dataDir,
  });
  const connection = await mongoose.createConnection(mongo.url).asPromise();
  const db = connection.useDb("agentnet_bench_consumption", { useCache: false });
  // Start empty: an interrupted earlier run would otherwise leave its documents behind.
  await db.dropDatabase();
  const serviceBus = await connectBus({ url: nats.url, name: "bench-consumption" });
  const clientBus = await connectBus({ url: nats.url, name: "bench-proxy" });
  const durable = `bench-${newId()}`;
  const service = await startConsumption({
    nc: serviceBus,
    connection: db,
    logger: createLogger("bench", "warn"),
    options: { durable, deliverNew: true, sweepIntervalMs: 0, pruneIntervalMs: 0 },
  });
  const accountId = `bench-${newId()}`;
  const admitted: { body: ReserveRequest; reservationId: string }[] = [];

  const timedReserve = async (body: ReserveRequest, latencies: number[]) => {
    const started = performance.now();
    const reply = await request(clientBus, Consumption.reserve, body, { timeoutMs: 60_000 });
    latencies.push(performance.now() - started);
    if (reply.decision !== "allow" || !reply.reservation_id) throw new Error("a reservation was refused");
    admitted.push({ body, reservationId: reply.reservation_id });
  };
  const report = (label: string, latencies: number[], ms: number) => {
    const sorted = [...latencies].sort((a, b) => a - b);
    console.log(
      `${label}: ${latencies.length} reservations in ${(ms / 1000).toFixed(2)} s = ` +
        `${Math.round((latencies.length * 1000) / ms)}/s; p50 ${percentile(sorted, 50).toFixed(2)} ms, ` +
        `p99 ${percentile(sorted, 99).toFixed(2)} ms`,
    );
  };

  console.log(`backends: nats ${nats.url} (${nats.engine}), mongo ${mongo.url} (${mongo.engine})`);
  // Warm-up: connections, indexes, JIT.
  for (let i = 0; i < 20; i++) await timedReserve(makeRequest(accountId, i % 50), []);

  const sequential: number[] = [];
  let started = performance.now();
  for (let i = 0; i < SEQUENTIAL; i++) await timedReserve(makeRequest(accountId, i % 50), sequential);
  report("1 caller", sequential, performance.now() - started);

  const concurrent: number[] = [];
  let next = 0;
  started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT }, async (_, caller) => {
      while (next < TOTAL) {
        next++;
        await timedReserve(makeRequest(accountId, caller), concurrent);
      }
    }),
  );
  report(`${CONCURRENT} callers`, concurrent, performance.now() - started);

  // Settlement: one event per admitted reservation, counted when the group counter has them all.
  started = performance.now();
  await Promise.all(
    admitted.map(({ body, reservationId }) => {
      const event: GatewayRequestEvent = {
        v: 1,
        id: body.request_id,
        account_id: accountId,
        logged: false,
        reservation_id: reservationId,
        user_email: "",
        user_name: "",
        service_id: "bench",
        timestamp: new Date().toISOString(),
        status_code: 200,
        duration_ms: 100,
        user_id: body.user_id,
        source_ip: "",
        method: "POST",
        host: "",
        path: "",
        provider: "openai",
        model: "gpt-4o-mini",
        session_id: "",
        resolved_provider_id: "p",
        selected_policy_id: "policy",
        decision: "allow",
        deny_reason: "",
        input_tokens: 700,
        output_tokens: 300,
        total_tokens: 1000,
        cached_input_tokens: 0,
        cache_creation_tokens: 0,
        cost_usd: 0.01,
        input_cost_usd: 0.007,
        cached_input_cost_usd: 0,
        cache_creation_cost_usd: 0,
        output_cost_usd: 0.003,
        cache_cost_usd: 0,
        stream: false,
        group_ids: body.group_ids,
      };
      return publishEvent(clientBus, Events.requests(accountId), event, body.request_id);
    }),
  );
  const caller = {
    account_id: accountId,
    user_id: "user-0",
    role: "owner" as const,
    group_ids: [],
    email: "",
    name: "",
  };
  for (;;) {
    const counters = await request(clientBus, Consumption.list, { caller }, { timeoutMs: 300_000 });
    const group = counters.find((counter) => counter.dimension_kind === "group");
    if (group && group.tokens_input === admitted.length * 700) break;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  const settleMs = performance.now() - started;
  console.log(
    `settlement: ${admitted.length} events counted in ${(settleMs / 1000).toFixed(2)} s = ` +
      `${Math.round((admitted.length * 1000) / settleMs)} events/s`,
  );

  await service.stop();
  await deleteDurableConsumer(serviceBus, durable);
  await db.dropDatabase();
  await serviceBus.drain();
  await clientBus.drain();
  await connection.close();
  await mongo.stop();
  await nats.stop();
}

await run();
