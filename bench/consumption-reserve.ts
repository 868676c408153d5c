/**
 * Consumption reservation benchmark on the local MongoDB-wire server (FerretDB unless MONGO_URL
 * says otherwise). Runs the consumption service in its own process
 * (bench/consumption-service.ts) and calls `agn.consumption.reserve` over NATS from a separate
 * connection, as the gateway proxy would: one caller in a loop, then open-loop runs at a fixed
 * rate (BENCH_RATE, 2,000/s by default, for BENCH_SECONDS, 10: requests are sent on schedule
 * whether or not earlier ones were answered) — the bare NATS round trip (the floor), reservations
 * whose events follow each one a second later as a proxy's traffic does (the service settles
 * while it decides), reservations that are never settled (holds pile up), and the floor again
 * while those holds' events settle at the same rate (the machine's load without any reservation)
 * — then 50 concurrent callers as fast as they go (50 users of one source group, so the group
 * counter is shared and hot). Each open loop also prints the CPU the bench, the service,
 * nats-server and FerretDB took over it. Each request is capped by a policy (user + group token
 * caps, far from binding) and one account-wide budget rule (USD caps): 2 counters held per
 * reservation. Then it publishes one settling event per admitted reservation and times how fast
 * they are all counted.
 *
 *   pnpm --filter @agentnet/bench bench:consumption
 *   BENCH_RATE=3000 BENCH_SECONDS=20 pnpm --filter @agentnet/bench bench:consumption
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { loadavg } from "node:os";
import { connectBus, deleteDurableConsumer, publishEvent, request } from "@agentnet/bus";
import {
  ACCOUNT_EVENTS_STREAM,
  Consumption,
  Events,
  type GatewayRequestEvent,
  type ReserveReply,
  type ReserveRequest,
} from "@agentnet/contracts";
import { defaultDataDir, ensureMongo, ensureNats } from "@agentnet/local-backends";
import { newId } from "@agentnet/service-kit";
import mongoose from "mongoose";
import { spawnBenchScript } from "./bench-script";
import { percentile } from "./percentile";
import { launchedBy, processCpu } from "./process-cpu";

type Reservation = Extract<ReserveReply, { decision: "allow" }>;

const CONCURRENT = 50;
const SEQUENTIAL = 2_000;
const RATE = Number(process.env.BENCH_RATE ?? 2_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** How long a request takes between its reservation and its event, in the phase that settles. */
const REQUEST_MS = 1_000;
const CONCURRENT_TOTAL = 20_000;

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
        enabled: true,
        target_groups: [],
        target_users: [],
        limits: {
          token_limit: { enabled: false, user_cap: 0, group_cap: 0, window_seconds: 3600 },
          budget_limit: { enabled: true, user_cap_usd: 10 ** 6, group_cap_usd: 0, window_seconds: 3600 },
        },
      },
    ],
    estimate: { input_tokens: 800, output_tokens: 4096, cost_usd: 0.05 },
  };
}

const DATABASE = "agentnet_bench_consumption";
/** The service process answers this subject at once with what it was sent: the NATS floor. */
const FLOOR_SUBJECT = "bench.consumption.floor";
/** The MongoDB URL with its database replaced by `database`. */
const databaseUrl = (url: string, database: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
};

function startService(env: Record<string, string>): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    // BENCH_SERVICE_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, profiles the service.
    const child = spawnBenchScript(
      "consumption-service.ts",
      env,
      process.env.BENCH_SERVICE_NODE_ARGS?.split(" ").filter(Boolean),
    );
    child.stdout?.on("data", (data: Buffer) => {
      if (data.toString().includes("consumption ready")) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`the consumption service exited with ${code}`)));
  });
}

async function run() {
  const dataDir = defaultDataDir();
  const nats = await ensureNats({ url: process.env.NATS_URL ?? "nats://127.0.0.1:4222", dataDir });
  const mongo = await ensureMongo({
    url: process.env.MONGO_URL ?? "mongodb://127.0.0.1:27017/agentnet",
    dataDir,
  });
  const connection = await mongoose.createConnection(mongo.url).asPromise();
  const db = connection.useDb(DATABASE, { useCache: false });
  // Start empty: an interrupted earlier run would otherwise leave its documents behind.
  await db.dropDatabase();
  const clientBus = await connectBus({ url: nats.url, name: "bench-proxy" });
  const durable = `bench-${newId()}`;
  const service = await startService({
    BENCH_MONGO_URL: databaseUrl(mongo.url, DATABASE),
    BENCH_NATS_URL: nats.url,
    BENCH_DURABLE: durable,
    BENCH_FLOOR_SUBJECT: FLOOR_SUBJECT,
  });
  const accountId = `bench-${newId()}`;
  if (service.pid === undefined) throw new Error("the consumption service has no pid");
  // Per phase, the share of the two cores each process took: the latency tails wait for it.
  const phaseCpu = await processCpu({ bench: process.pid, service: await launchedBy(service.pid) }, [
    "nats-server",
    "ferretdb",
  ]);
  // Only what the settling events need: keeping whole requests grew this process's heap, and its
  // GC pauses showed up as reservation latency.
  const admitted: {
    body: Pick<ReserveRequest, "request_id" | "user_id" | "group_ids">;
    reservation: Reservation;
  }[] = [];

  type Admitted = (typeof admitted)[number];
  const timedReserve = async (
    body: ReserveRequest,
    latencies: number[] | null,
    onAdmitted: (entry: Admitted) => void = (entry) => admitted.push(entry),
  ) => {
    const started = performance.now();
    const reply = await request(clientBus, Consumption.reserve, body, { timeoutMs: 60_000 });
    latencies?.push(performance.now() - started);
    if (reply.decision !== "allow" || !reply.reservation_id) throw new Error("a reservation was refused");
    onAdmitted({
      body: { request_id: body.request_id, user_id: body.user_id, group_ids: body.group_ids },
      reservation: reply,
    });
  };
  /** The event the proxy publishes once an admitted request is done. */
  const eventOf = ({ body, reservation }: Admitted): GatewayRequestEvent => {
    return {
      v: 1,
      id: body.request_id,
      account_id: accountId,
      logged: false,
      reservation_id: reservation.reservation_id,
      reserved_counters: reservation.counters,
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
  };
  const report = (label: string, latencies: ArrayLike<number>, ms: number) => {
    const sorted = Array.from(latencies).sort((a, b) => a - b);
    console.log(
      `${label}: ${latencies.length} calls in ${(ms / 1000).toFixed(2)} s = ` +
        `${Math.round((latencies.length * 1000) / ms)}/s; p50 ${percentile(sorted, 0.5).toFixed(2)} ms, ` +
        `p99 ${percentile(sorted, 0.99).toFixed(2)} ms`,
    );
  };

  /**
   * Sends `call` RATE times a second for SECONDS, on schedule whether or not earlier calls were
   * answered (a 1 ms tick sends whatever is due). Latencies go into a preallocated array and
   * nothing else is kept per call: what the bench retains is scavenged in its own process, and its
   * pauses would be counted as reservation latency.
   */
  const openLoop = async (label: string, call: () => Promise<unknown>) => {
    await phaseCpu();
    const total = RATE * SECONDS;
    const latencies = new Float64Array(total);
    const started = performance.now();
    await new Promise<void>((resolve, reject) => {
      let sent = 0;
      let answered = 0;
      const tick = setInterval(() => {
        const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * RATE));
        for (; sent < due; sent++) {
          const index = sent;
          const sentAt = performance.now();
          call().then(() => {
            latencies[index] = performance.now() - sentAt;
            if (++answered === total) resolve();
          }, reject);
        }
        if (sent >= total) clearInterval(tick);
      }, 1);
    });
    report(label, latencies, performance.now() - started);
    console.log(`  cpu of one core: ${await phaseCpu()}`);
  };

  const load = () =>
    loadavg()
      .map((n) => n.toFixed(2))
      .join(" ");
  console.log(`load average before: ${load()}`);
  console.log(`backends: nats ${nats.url} (${nats.engine}), mongo ${mongo.url} (${mongo.engine})`);
  // Warm-up: connections and the JIT of both processes (the first thousand calls run unoptimised).
  for (let i = 0; i < 3_000; i++) await timedReserve(makeRequest(accountId, i % 50), null);

  const sequential: number[] = [];
  let started = performance.now();
  for (let i = 0; i < SEQUENTIAL; i++) await timedReserve(makeRequest(accountId, i % 50), sequential);
  report("1 caller", sequential, performance.now() - started);

  // Open loop: the floor first (the same NATS round trip to a responder that answers at once, in
  // the service's process), then reservations, each at the same fixed rate.
  const floorReply = JSON.stringify({
    decision: "allow",
    reservation_id: "",
    counters: [],
  } satisfies ReserveReply);
  const echo = () => clientBus.request(FLOOR_SUBJECT, floorReply, { timeout: 60_000 });
  await openLoop(`floor (bare NATS request/reply) at ${RATE}/s`, echo);
  // As a proxy's traffic does: each admitted request's event follows it REQUEST_MS later, so the
  // service settles while it decides and holds stay at about RATE × REQUEST_MS.
  let paced = 0;
  let settledAlong = 0;
  const publishFailures: unknown[] = [];
  const throwIfPublishingFailed = () => {
    if (publishFailures.length > 0)
      throw new Error(`${publishFailures.length} settling events failed to publish`);
  };
  /** Publishes an admitted request's event as the proxy does, without waiting for its ack. */
  const settle = (entry: Admitted) => {
    settledAlong++;
    return publishEvent(clientBus, Events.requests(accountId), eventOf(entry), entry.body.request_id).catch(
      (error: unknown) => void publishFailures.push(error),
    );
  };
  const settleLater = (entry: Admitted) => setTimeout(() => settle(entry), REQUEST_MS);
  await openLoop(`open loop at ${RATE}/s, each settled ${REQUEST_MS} ms later`, () =>
    timedReserve(makeRequest(accountId, paced++ % 50), null, settleLater),
  );
  await new Promise((resolve) => setTimeout(resolve, REQUEST_MS + 500));
  throwIfPublishingFailed();
  // The stress case: nothing settles while reservations arrive, so holds pile up (RATE × SECONDS).
  const heldFrom = admitted.length;
  await openLoop(`open loop at ${RATE}/s, nothing settled`, () =>
    timedReserve(makeRequest(accountId, paced++ % 50), null),
  );
  // The floor again under the settling phase's event traffic: those holds' events at the same
  // rate, each published as its echo is sent. What this adds to the floor is the machine's load
  // alone (the publishing, the stream, the service settling), with no reservation decided.
  const held = admitted.splice(heldFrom);
  let echoSettled = 0;
  let unacked = 0;
  await openLoop(`floor at ${RATE}/s while ${RATE} events/s settle`, () => {
    const entry = held[echoSettled];
    if (entry) {
      echoSettled++;
      unacked++;
      settle(entry).finally(() => unacked--);
    }
    return echo();
  });
  while (unacked > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  admitted.push(...held.slice(echoSettled));
  throwIfPublishingFailed();
  const concurrent: number[] = [];
  let next = 0;
  started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT }, async (_, caller) => {
      while (next < CONCURRENT_TOTAL) {
        next++;
        await timedReserve(makeRequest(accountId, caller), concurrent);
      }
    }),
  );
  report(`${CONCURRENT} callers`, concurrent, performance.now() - started);

  // Settlement: one event per admitted reservation, counted when the group counter has them all.
  started = performance.now();
  // A window of acks in flight, as the proxy's publisher keeps: 40,000 at once would stall this process.
  let published = 0;
  await Promise.all(
    Array.from({ length: 256 }, async () => {
      while (published < admitted.length) {
        const entry = admitted[published++];
        if (entry)
          await publishEvent(clientBus, Events.requests(accountId), eventOf(entry), entry.body.request_id);
      }
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
    if (group && group.tokens_input === (admitted.length + settledAlong) * 700) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const settleMs = performance.now() - started;
  console.log(
    `settlement: ${admitted.length} events counted in ${(settleMs / 1000).toFixed(2)} s = ` +
      `${Math.round((admitted.length * 1000) / settleMs)} events/s`,
  );

  console.log(`load average after: ${load()}`);
  service.kill("SIGTERM");
  await once(service, "exit");
  await deleteDurableConsumer(clientBus, durable);
  await deleteDurableConsumer(clientBus, `${durable}-accounts`, ACCOUNT_EVENTS_STREAM);
  await db.dropDatabase();
  await clientBus.drain();
  await connection.close();
  await mongo.stop();
  await nats.stop();
}

await run();
