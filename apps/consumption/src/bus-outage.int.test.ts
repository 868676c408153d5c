import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectBus, type NatsConnection, request } from "@agentnet/bus";
import { LeaseTable } from "@agentnet/caps";
import { Consumption } from "@agentnet/contracts";
import {
  type BusCredentials,
  freePort,
  generateBusCredentials,
  type NatsBackend,
  startNats,
} from "@agentnet/local-backends";
import { createLogger } from "@agentnet/service-kit";
import { connectTestMongo, eventually, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsumptionService, startConsumption } from "./app";
import { admit, makeCapped, TestClock } from "./test-support";

const QUOTA_LEASE_TTL_MS = 2_000;
const OUTAGE_GRACE_MS = 30_000;

/**
 * A real NATS outage: this file's own nats-server is killed and started again on the same port
 * and data, or frozen (SIGSTOP) and continued, with a consumption leader and a proxy's lease table
 * on their own connections.
 */
let dataDir: string;
let port: number;
let credentials: BusCredentials;
let nats: NatsBackend;
let leaderBus: NatsConnection;
let proxyBus: NatsConnection;
let consumption: ConsumptionService;

const startOwnNats = async () => {
  nats = await startNats({ host: "127.0.0.1", port, dataDir, credentials });
};
const connectAs = (service: "consumption" | "gateway-proxy") =>
  connectBus({
    url: `nats://127.0.0.1:${port}`,
    service,
    auth: { user: service, password: credentials[service] },
  });

/** A proxy's leases, wired to its connection as the gateway proxy wires them. */
function proxyLeases(nc: NatsConnection, clock: () => number = Date.now) {
  const table = new LeaseTable((ask) => request(nc, Consumption.lease, ask, { timeoutMs: 1_000 }), {
    proxyId: uniqueId("proxy"),
    clock,
    idleMs: 60_000,
    outageGraceMs: OUTAGE_GRACE_MS,
    busAnswers: () => nc.flush(),
  });
  const connection = { lost: false };
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") {
        connection.lost = true;
        table.busLost();
      }
      if (status.type === "reconnect") {
        connection.lost = false;
        table.busReconnected();
      }
    }
  })();
  return Object.assign(table, { lost: () => connection.lost });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agn-bus-outage-"));
  port = await freePort();
  credentials = generateBusCredentials();
  await startOwnNats();
  [leaderBus, proxyBus] = await Promise.all([connectAs("consumption"), connectAs("gateway-proxy")]);
  const connection = (await connectTestMongo()).useDb(uniqueId("agentnet_test_bus_outage"), {
    useCache: false,
  });
  consumption = await startConsumption({
    nc: leaderBus,
    connection,
    logger: createLogger("consumption-test", "silent"),
    options: {
      durable: uniqueId("consumption"),
      deliverNew: true,
      leaseTtlMs: 1_500,
      quotaLeaseTtlMs: QUOTA_LEASE_TTL_MS,
      leaseOutageGraceMs: OUTAGE_GRACE_MS,
      sweepIntervalMs: 200,
    },
  });
}, 30_000);

afterAll(async () => {
  await consumption?.stop();
  await Promise.all([leaderBus?.close(), proxyBus?.close()]);
  await nats?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a NATS outage under a cap", () => {
  it("keeps admitting on leases past their TTL, and the leader resumes its term at once, holding them", async () => {
    const clock = new TestClock(Date.now());
    const scope = makeCapped(10_000);
    const proxy = proxyLeases(proxyBus);
    expect((await admit(proxy, scope, clock, 100)).kind).toBe("held");

    await nats.stop();
    await eventually(() => !consumption.isLeader(), 10_000);
    // Well past the lease's TTL: the proxy admits on it all the same, and asks nobody.
    await new Promise((done) => setTimeout(done, 2 * QUOTA_LEASE_TTL_MS));
    for (let i = 0; i < 5; i++) expect((await admit(proxy, scope, clock, 100)).kind).toBe("held");

    await startOwnNats();
    // The same replica wins its leadership back and keeps its state: no wait for the horizon
    // (OUTAGE_GRACE_MS away), which a new term would owe.
    await eventually(() => consumption.isLeader(), 15_000);
    const other = proxyLeases(await connectAs("gateway-proxy"));
    const fresh = await admit(other, scope, clock, 100);
    expect(fresh.kind).toBe("held");
    // The first proxy's lease is still held: the whole cap is not there for the taking.
    const whole = await admit(other, scope, clock, 9_000);
    expect(whole.kind).toBe("refused");
  }, 60_000);

  it("admits past a window's end on the next window's lease taken ahead, and refuses the unleased at once", async () => {
    await eventually(() => consumption.isLeader(), 15_000);
    // Ten seconds before an hour's end: the outage grace (30 s) reaches into the next window.
    const clock = new TestClock(Date.UTC(2031, 0, 1, 9, 59, 50));
    const scope = makeCapped(10_000);
    const unleased = makeCapped(10_000);
    const proxy = proxyLeases(proxyBus, clock.read);
    expect((await admit(proxy, scope, clock, 100)).kind).toBe("held");
    await proxy.maintain();

    await nats.stop();
    await eventually(() => proxy.lost() && !consumption.isLeader(), 10_000);
    clock.advance(15_000);
    for (let i = 0; i < 5; i++) expect((await admit(proxy, scope, clock, 100)).kind).toBe("held");
    // No lease and no bus: refused without waiting for an ask that cannot leave (1 s timeout).
    const startedAt = performance.now();
    expect((await admit(proxy, unleased, clock, 100)).kind).toBe("unavailable");
    expect(performance.now() - startedAt).toBeLessThan(500);

    await startOwnNats();
    await eventually(() => consumption.isLeader() && !proxy.lost(), 15_000);
    // The leader granted the next window's lease before the outage and holds it: another proxy
    // cannot take the whole cap of the new window.
    const other = proxyLeases(await connectAs("gateway-proxy"), clock.read);
    expect((await admit(other, scope, clock, 9_000)).kind).toBe("refused");
    expect((await admit(other, scope, clock, 100)).kind).toBe("held");
  }, 60_000);

  it("counts a NATS that stops answering (SIGSTOP) as lost: both sides hold the leases through it", async () => {
    await eventually(() => consumption.isLeader(), 15_000);
    const clock = new TestClock(Date.now());
    const scope = makeCapped(10_000);
    const proxy = proxyLeases(proxyBus);
    expect((await admit(proxy, scope, clock, 100)).kind).toBe("held");
    const frozen = nats.pid as number;

    process.kill(frozen, "SIGSTOP");
    try {
      // The lease runs out (2 s) before the clients declare the silent server lost (3 to 4 s): an
      // admission in between waits for that verdict instead of being refused.
      const admissions: string[] = [];
      for (const until = Date.now() + 4 * QUOTA_LEASE_TTL_MS; Date.now() < until; ) {
        admissions.push((await admit(proxy, scope, clock, 100)).kind);
        await new Promise((done) => setTimeout(done, 250));
      }
      expect(admissions.filter((kind) => kind !== "held")).toEqual([]);
      expect(proxy.lost()).toBe(true);
    } finally {
      process.kill(frozen, "SIGCONT");
    }

    await eventually(() => consumption.isLeader() && !proxy.lost(), 20_000);
    // The leader held the lease through the silence: the whole cap is not there for the taking.
    const other = proxyLeases(await connectAs("gateway-proxy"));
    expect((await admit(other, scope, clock, 9_000)).kind).toBe("refused");
    expect((await admit(other, scope, clock, 100)).kind).toBe("held");
  }, 60_000);
});
