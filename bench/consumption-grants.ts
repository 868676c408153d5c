/**
 * How many lease requests the consumption leader answers, and its CPU per request: proxies asking
 * for more headroom on a capped request's two counters (user and group), the worst case of a cap
 * nearly reached, where every admitted request needs a grant of its own. Requests come from
 * `BENCH_PROXIES` proxies over `BENCH_ACCOUNTS` accounts of `BENCH_USERS_PER_ACCOUNT` users, with
 * `BENCH_IN_FLIGHT` outstanding, `BENCH_GRANTS` in all after a warm-up of a tenth as many.
 *
 *   pnpm --filter @agentnet/bench bench:consumption-grants
 */
import { join } from "node:path";
import { request } from "@agentnet/bus";
import { Consumption, type LeaseRequest } from "@agentnet/contracts";
import { ensureMongo, findRepoRoot } from "@agentnet/local-backends";
import { runBench } from "./bench-script";
import { startBenchNats } from "./bus";
import { processTreeCpuMs } from "./process-cpu";
import { startConsumptionProcess, stopChildren } from "./proxy-stack";

const GRANTS = Number(process.env.BENCH_GRANTS ?? 20_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 64);
const PROXIES = Number(process.env.BENCH_PROXIES ?? 3);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 20);
const USERS_PER_ACCOUNT = Number(process.env.BENCH_USERS_PER_ACCOUNT ?? 10);
/** Tokens each request asks for: one request's estimate. */
const NEED = 2_000;
const CAP = 1_000_000_000_000;

interface Holder {
  account: string;
  proxy: string;
  user: string;
  group: string;
  /** Per counter (user, group): the lease the proxy holds and what it committed against it. */
  leases: [string | undefined, string | undefined];
  committed: number;
}

const id = (prefix: string, n: number) => `${prefix}_benchgrant${String(n).padStart(8, "0")}`;

async function main() {
  const nats = await startBenchNats();
  const mongo = await ensureMongo({
    url: process.env.BENCH_MONGO_URL ?? "mongodb://127.0.0.1:27455/agentnet_bench",
    dataDir: join(findRepoRoot(), ".data", "bench"),
  });
  const database = new URL(mongo.url);
  database.pathname = `/agentnet_bench_grants_${Date.now()}`;
  const proxy = await nats.connectAs("gateway-proxy");
  const consumption = await startConsumptionProcess({
    name: "consumption",
    busEnv: nats.serviceEnv("consumption"),
    mongoUrl: database.toString(),
    durable: `bench-grants-${Date.now()}`,
  });
  try {
    const windowStart = Math.floor(Date.now() / 3_600_000) * 3600;
    const counter = (
      dimension_kind: "user" | "group",
      dimension_id: string,
      lease_id: string | undefined,
    ) => ({
      dimension_kind,
      dimension_id,
      window_seconds: 3600,
      window_start: windowStart,
      ...(lease_id ? { lease_id } : {}),
    });
    const holders: Holder[] = [];
    for (let a = 0; a < ACCOUNTS; a++) {
      for (let u = 0; u < USERS_PER_ACCOUNT; u++) {
        for (let p = 0; p < PROXIES; p++) {
          holders.push({
            account: id("acc", a),
            proxy: id("prx", p),
            user: id("usr", a * USERS_PER_ACCOUNT + u),
            group: id("grp", a),
            leases: [undefined, undefined],
            committed: 0,
          });
        }
      }
    }
    /** One admitted request's ask: what the holder committed so far, and room for one more. */
    const ask = async (holder: Holder) => {
      const body: LeaseRequest = {
        account_id: holder.account,
        proxy_id: holder.proxy,
        asks: [
          counter("user", holder.user, holder.leases[0]),
          counter("group", holder.group, holder.leases[1]),
        ].map((asked) => ({
          counter: asked,
          cap_tokens: CAP,
          committed: { tokens: holder.committed, cost_nanos: 0, calls: 0 },
          need: { tokens: NEED, cost_nanos: 0, calls: 0 },
        })),
      };
      const reply = await request(proxy, Consumption.lease, body);
      if (!reply.grants.every((grant) => grant.fits))
        throw new Error("a grant did not fit under a cap that has room");
      holder.leases = [reply.grants[0]?.lease_id, reply.grants[1]?.lease_id];
      holder.committed += NEED;
    };
    const run = async (count: number) => {
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const holder = holders[next++ % holders.length];
          if (holder) await ask(holder);
        }
      };
      const cpuBefore = processTreeCpuMs(consumption.pid ?? 0);
      const started = performance.now();
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      const seconds = (performance.now() - started) / 1000;
      return {
        perSecond: count / seconds,
        cpuUs: ((processTreeCpuMs(consumption.pid ?? 0) - cpuBefore) * 1000) / count,
      };
    };
    await run(Math.ceil(GRANTS / 10));
    const { perSecond, cpuUs } = await run(GRANTS);
    process.stdout.write(
      `${GRANTS} lease requests (2 counters each, ${holders.length} proxy × user pairs, ${IN_FLIGHT} in flight): ` +
        `${Math.round(perSecond)} per second, consumption ${cpuUs.toFixed(1)} µs of CPU per request\n`,
    );
  } finally {
    await stopChildren([consumption]);
    await proxy.drain();
    await mongo.stop();
    await nats.stop();
  }
}

runBench(main);
