import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NatsConnection, request } from "@agentnet/bus";
import { LeaseTable } from "@agentnet/caps";
import { Consumption, type LeaseReply } from "@agentnet/contracts";
import { type Backend, freePort, startMongo } from "@agentnet/local-backends";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus, eventually, uniqueId } from "@agentnet/testkit";
import mongoose, { type Connection } from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsumptionService, MONGO_CONNECTION_OPTIONS, startConsumption } from "./app";
import { admit, makeCapped, TestClock } from "./test-support";

const QUOTA_LEASE_TTL_MS = 3_000;

/**
 * A real store outage: this file's own FerretDB is killed and started again on the same port and
 * data while a proxy keeps admitting under a cap, with the consumption leader on the shared NATS.
 */
let dataDir: string;
let mongoUrl: string;
let mongo: Backend;
let connection: Connection;
let nc: NatsConnection;
let consumption: ConsumptionService;

const startOwnMongo = async () => {
  mongo = await startMongo({ url: mongoUrl, dataDir });
  return mongo.url;
};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agn-store-outage-"));
  mongoUrl = `mongodb://127.0.0.1:${await freePort()}/agentnet`;
  const url = await startOwnMongo();
  // Server selection gives up sooner than the service's 10 s, so that a write waited for fails
  // within the test's time.
  connection = await mongoose
    .createConnection(url, { ...MONGO_CONNECTION_OPTIONS, serverSelectionTimeoutMS: 2_000 })
    .asPromise();
  nc = await connectTestBus("consumption-store-outage");
  consumption = await startConsumption({
    nc,
    connection,
    logger: createLogger("consumption-test", "silent"),
    options: {
      durable: uniqueId("consumption"),
      deliverNew: true,
      quotaLeaseTtlMs: QUOTA_LEASE_TTL_MS,
      sweepIntervalMs: 200,
    },
  });
}, 60_000);

afterAll(async () => {
  await consumption?.stop();
  await nc?.drain();
  await connection?.close();
  await mongo?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a store outage under a cap", () => {
  it("grants on, ending by the horizon it recorded, refuses past it, and grants full leases once the store is back", async () => {
    const clock = new TestClock(Date.now());
    const replies: { at: number; reply?: LeaseReply; error?: unknown }[] = [];
    const table = new LeaseTable(
      async (ask) => {
        const at = Date.now();
        try {
          const reply = await request(nc, Consumption.lease, ask, { timeoutMs: 10_000 });
          replies.push({ at, reply });
          return reply;
        } catch (error) {
          replies.push({ at, error });
          throw error;
        }
      },
      {
        proxyId: uniqueId("proxy"),
        clock: Date.now,
        idleMs: 60_000,
        outageGraceMs: 75_000,
        busAnswers: () => nc.flush(),
      },
    );
    const scope = makeCapped(100_000_000);
    const admitted = async () => {
      const admission = await admit(table, scope, clock).catch(() => undefined);
      if (admission?.kind !== "held") return false;
      table.finish(admission.hold, admission.hold.amount);
      return true;
    };
    expect(await admitted()).toBe(true);
    expect(replies.at(-1)?.reply?.ttl_ms).toBe(QUOTA_LEASE_TTL_MS);

    const killedAt = Date.now();
    await mongo.stop();
    // Admitting every 50 ms, and keeping the lease fresh as the proxy's maintenance does.
    const outcomes: { at: number; admitted: boolean }[] = [];
    while (Date.now() < killedAt + 2.5 * QUOTA_LEASE_TTL_MS) {
      await table.maintain().catch(() => undefined);
      outcomes.push({ at: Date.now(), admitted: await admitted() });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    // The recorded horizon was at least 1.25 TTL away when the store went: a TTL of the outage is
    // served, on grants that end by it (shorter than a TTL once it is near).
    const firstRefusal = outcomes.find((outcome) => !outcome.admitted)?.at ?? Number.POSITIVE_INFINITY;
    expect(firstRefusal - killedAt).toBeGreaterThanOrEqual(1.2 * QUOTA_LEASE_TTL_MS);
    const grantsInOutage = replies.filter((entry) => entry.at > killedAt && entry.reply);
    expect(grantsInOutage.some((entry) => (entry.reply?.ttl_ms ?? 0) < QUOTA_LEASE_TTL_MS)).toBe(true);
    const horizonBound = killedAt + 1.5 * QUOTA_LEASE_TTL_MS;
    for (const entry of grantsInOutage) {
      expect(entry.at + (entry.reply?.ttl_ms ?? 0)).toBeLessThanOrEqual(horizonBound);
    }
    // Past it nothing is granted: the next leader could not know of the lease.
    expect(
      outcomes.filter((outcome) => outcome.at > horizonBound).every((outcome) => !outcome.admitted),
    ).toBe(true);

    await startOwnMongo();
    await eventually(admitted, 20_000);
    await eventually(async () => {
      await table.maintain();
      return replies.at(-1)?.reply?.ttl_ms === QUOTA_LEASE_TTL_MS;
    }, 10_000);
  }, 90_000);
});
