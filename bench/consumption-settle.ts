/**
 * What consumption spends per request, without the proxy: the CPU time of the consumption process
 * (as deployed, `bench/consumption-service.ts`) while it follows one admission and settles one event
 * per request, for events no limit applies to ("plain") and for events that count on two capped
 * counters with their leases ("capped", as the proxy's "+ cap" rows send them). The two kinds take
 * turns, round by round, so a change of the machine's speed lands on both.
 *
 *   pnpm --filter @agentnet/bench bench:consumption
 *   BENCH_EVENTS=20000 BENCH_ROUNDS=5 pnpm --filter @agentnet/bench bench:consumption
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { deleteDurableConsumer, ensureRequestStream, publishEvent, request } from "@agentnet/bus";
import {
  Consumption,
  Events,
  type GatewayRequestEvent,
  REQUESTS_STREAM,
  type ReservedCounter,
} from "@agentnet/contracts";
import { ensureMongo, findRepoRoot } from "@agentnet/local-backends";
import { newId } from "@agentnet/service-kit";
import { jetstreamManager } from "@nats-io/jetstream";
import { runBench } from "./bench-script";
import { startBenchNats } from "./bus";
import { processTreeCpuMs } from "./process-cpu";
import { startConsumptionProcess, stopChildren } from "./proxy-stack";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
/** `plain` or `capped` alone, e.g. to profile one kind (`BENCH_CONSUMPTION_NODE_ARGS="--cpu-prof --cpu-prof-dir=…"`). */
const KINDS = (process.env.BENCH_KINDS ?? "plain,capped").split(",");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Admissions of one event-loop turn leave as one message: the proxy under load sends about this many per turn. */
const ADMISSIONS_PER_MESSAGE = 16;
/** Events published before waiting for their acks, as the proxy's publisher keeps in flight. */
const IN_FLIGHT = 256;
const ROOT = findRepoRoot();
const ACCOUNT = "acc_benchsettle000001";
const USER = "usr_benchsettle000001";
const GROUP = "grp_benchsettle000001";
const PROXY = "prx_benchsettle000001";

const event = (counters: ReservedCounter[] | undefined): GatewayRequestEvent => ({
  v: 1,
  id: newId(),
  account_id: ACCOUNT,
  service_id: "svc_benchsettle",
  timestamp: new Date().toISOString(),
  status_code: 200,
  duration_ms: 3,
  user_id: USER,
  user_email: "bench@example.com",
  user_name: "Bench",
  source_ip: "127.0.0.1",
  method: "POST",
  host: "gw.bench.local",
  path: "/v1/chat/completions",
  provider: "OpenAI",
  model: "gpt-4o-mini",
  session_id: "",
  resolved_provider_id: "prv_benchsettle000001",
  selected_policy_id: "pol_benchsettle000001",
  decision: "allow",
  deny_reason: "",
  input_tokens: 12,
  output_tokens: 6,
  total_tokens: 18,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  cost_usd: 0.0000054,
  input_cost_usd: 0.0000018,
  cached_input_cost_usd: 0,
  cache_creation_cost_usd: 0,
  output_cost_usd: 0.0000036,
  cache_cost_usd: 0,
  stream: false,
  group_ids: [GROUP],
  logged: true,
  ...(counters ? { reserved_counters: counters } : {}),
});

async function main() {
  const nats = await startBenchNats();
  const mongo = await ensureMongo({
    url: process.env.BENCH_MONGO_URL ?? "mongodb://127.0.0.1:27455/agentnet_bench",
    dataDir: join(ROOT, ".data", "bench"),
  });
  const database = new URL(mongo.url);
  database.pathname = `/agentnet_bench_settle_${Date.now()}`;
  const durable = `bench-settle-${Date.now()}`;
  const proxy = await nats.connectAs("gateway-proxy");
  await ensureRequestStream(proxy);
  let consumption: ChildProcess | undefined;
  try {
    consumption = await startConsumptionProcess({
      name: "consumption",
      busEnv: nats.serviceEnv("consumption"),
      mongoUrl: database.toString(),
      durable,
    });
    const pid = consumption.pid ?? 0;

    // The capped events' counters, with leases the leader really granted (settling moves usage out of them).
    const window_start = Math.floor(Date.now() / 3_600_000) * 3600;
    const counterOf = (dimension_kind: "user" | "group", dimension_id: string) => ({
      dimension_kind,
      dimension_id,
      window_seconds: 3600,
      window_start,
    });
    const counters = [counterOf("user", USER), counterOf("group", GROUP)];
    const big = 1_000_000_000_000;
    const reply = await request(proxy, Consumption.lease, {
      account_id: ACCOUNT,
      proxy_id: PROXY,
      asks: counters.map((counter) => ({
        counter,
        cap_tokens: big,
        committed: { tokens: 0, cost_nanos: 0 },
        need: { tokens: big / 4, cost_nanos: 0 },
      })),
    });
    const leased = counters.map((counter, i) => ({ ...counter, lease_id: reply.grants[i]?.lease_id }));

    const operator = await nats.connectOperator("bench");
    const jsm = await jetstreamManager(operator);
    /** Publishes `EVENTS` requests (admission first, then event) and waits until every event is settled. */
    const run = async (capped: boolean) => {
      const before = processTreeCpuMs(pid);
      const ferretdbBefore = processTreeCpuMs(mongo.pid ?? 0);
      const started = performance.now();
      let lastSeq = 0;
      for (let sent = 0; sent < EVENTS; sent += IN_FLIGHT) {
        const events = Array.from({ length: Math.min(IN_FLIGHT, EVENTS - sent) }, () =>
          event(capped ? leased : undefined),
        );
        for (let i = 0; i < events.length; i += ADMISSIONS_PER_MESSAGE) {
          const lines = events
            .slice(i, i + ADMISSIONS_PER_MESSAGE)
            .map((admitted) => `${admitted.id} ${JSON.stringify(admitted)}`);
          proxy.publish(Events.proxyAdmitted(PROXY), lines.join("\n"));
        }
        const acks = await Promise.all(
          events.map((settled) => publishEvent(proxy, Events.requests(ACCOUNT), settled, settled.id)),
        );
        lastSeq = Math.max(lastSeq, ...acks.map((ack) => ack.seq));
      }
      for (;;) {
        const info = await jsm.consumers.info(REQUESTS_STREAM, durable);
        if (info.ack_floor.stream_seq >= lastSeq) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const seconds = (performance.now() - started) / 1000;
      return {
        cpuUs: ((processTreeCpuMs(pid) - before) * 1000) / EVENTS,
        ferretdbUs: ((processTreeCpuMs(mongo.pid ?? 0) - ferretdbBefore) * 1000) / EVENTS,
        seconds,
      };
    };

    const kinds = [false, true].filter((capped) => KINDS.includes(capped ? "capped" : "plain"));
    // Not counted: the first pass of each kind warms the service up.
    for (const capped of kinds) await run(capped);
    const results = { plain: [] as number[], capped: [] as number[] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const capped of round % 2 === 1 ? kinds : [...kinds].reverse()) {
        const { cpuUs, ferretdbUs, seconds } = await run(capped);
        results[capped ? "capped" : "plain"].push(cpuUs);
        process.stdout.write(
          `round ${round} ${capped ? "capped" : "plain "}: consumption ${cpuUs.toFixed(1)} + FerretDB ${ferretdbUs.toFixed(1)} µs of CPU per request (${EVENTS} in ${seconds.toFixed(1)} s)\n`,
        );
      }
    }
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    process.stdout.write(
      `\nmedian of ${ROUNDS} rounds: plain ${median(results.plain).toFixed(1)} µs, capped ${median(results.capped).toFixed(1)} µs per request (+${(median(results.capped) - median(results.plain)).toFixed(1)})\n`,
    );
  } finally {
    await stopChildren(consumption ? [consumption] : []);
    await deleteDurableConsumer(proxy, durable).catch(() => undefined);
    await proxy.drain();
    await mongo.stop();
    await nats.stop();
  }
}

runBench(main);
