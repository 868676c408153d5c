import type { Hold, LeaseTable } from "@agentnet/caps";
import { usdToNanos } from "@agentnet/pricing";
import { connectTestBus, uniqueId } from "@agentnet/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { UsageStore } from "./store/usage-store";
import {
  admit,
  censusProxyOn,
  held,
  makeCapped,
  proxyOn,
  type Replica,
  type Scope,
  startReplica,
  TestClock,
} from "./test-support";

const DB = "agentnet_test_consumption_census";
const QUOTA_LEASE_TTL_MS = 2_000;
const OUTAGE_GRACE_MS = 75_000;
const USED = { tokens: 50, costNanos: usdToNanos(0.0005), calls: 0 };
const clock = new TestClock();
const started: Replica[] = [];
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await Promise.all(started.splice(0).map((replica) => replica.stop()));
});

/**
 * A leader that granted leases, lost NATS for a moment (recording the outage horizon, as
 * `busLost` does: proxies cut off with it may ride their leases that long) and died; its standby
 * leads in its place.
 */
async function takeOverAfterOutage(holdLease: (leader: Replica) => Promise<unknown>) {
  const durable = uniqueId("consumption");
  const options = {
    durable,
    leaseTtlMs: 1_000,
    quotaLeaseTtlMs: QUOTA_LEASE_TTL_MS,
    leaseOutageGraceMs: OUTAGE_GRACE_MS,
  };
  const leader = await startReplica(DB, clock, options);
  const standby = await startReplica(DB, clock, options);
  started.push(leader, standby);
  await holdLease(leader);
  await leader.connection.collection("consumption_meta").updateOne(
    { _id: `leases:${durable}` as never },
    {
      $set: { leases_valid_until: clock.now + OUTAGE_GRACE_MS, census_until: clock.now + OUTAGE_GRACE_MS },
    },
  );
  await leader.crash();
  await expect.poll(() => standby.service.isLeader(), { timeout: 10_000 }).toBe(true);
  return standby;
}

/** A request admitted on the proxy's leases, served, and finished. */
async function serve(table: LeaseTable, scope: Scope) {
  table.finish(await held(table, scope, clock), USED);
}

describe("a new leader's census of lease holders", () => {
  it("grants once every holder answered with no event pending, not at the outage horizon", async () => {
    const scope = makeCapped(10_000);
    const proxyBus = await connectTestBus();
    const holder = censusProxyOn(proxyBus, clock);
    stops.push(holder.stop, () => void proxyBus.close());
    const leader = await takeOverAfterOutage(() => serve(holder.table, scope));
    // Past the grants' horizon (1.5 lease TTLs), 72 s within the outage horizon.
    clock.advance(3_000);
    await expect
      .poll(async () => (await admit(proxyOn(leader.nc, clock), scope, clock)).kind, { timeout: 10_000 })
      .toBe("held");
  }, 30_000);

  it("waits while a holder has request events the stream has not taken", async () => {
    const scope = makeCapped(10_000);
    const proxyBus = await connectTestBus();
    let eventsPending = 2;
    const holder = censusProxyOn(proxyBus, clock, () => eventsPending);
    stops.push(holder.stop, () => void proxyBus.close());
    const leader = await takeOverAfterOutage(() => serve(holder.table, scope));
    clock.advance(3_000);
    const asking = proxyOn(leader.nc, clock);
    for (let round = 0; round < 2; round++) {
      expect((await admit(asking, scope, clock)).kind).toBe("unavailable");
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    eventsPending = 0;
    await expect.poll(async () => (await admit(asking, scope, clock)).kind, { timeout: 10_000 }).toBe("held");
  }, 30_000);

  it("waits while a request still holds on the last leader's lease, until it finishes", async () => {
    const scope = makeCapped(10_000);
    const proxyBus = await connectTestBus();
    const holder = censusProxyOn(proxyBus, clock);
    stops.push(holder.stop, () => void proxyBus.close());
    let inFlight: Hold | undefined;
    const leader = await takeOverAfterOutage(async () => {
      inFlight = await held(holder.table, scope, clock);
    });
    clock.advance(3_000);
    const asking = proxyOn(leader.nc, clock);
    for (let round = 0; round < 2; round++) {
      expect((await admit(asking, scope, clock)).kind).toBe("unavailable");
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    holder.table.finish(inFlight as Hold, USED);
    await expect.poll(async () => (await admit(asking, scope, clock)).kind, { timeout: 10_000 }).toBe("held");
  }, 30_000);

  it("waits out the outage horizon while a holder does not answer", async () => {
    const scope = makeCapped(10_000);
    const leader = await takeOverAfterOutage((first) => held(proxyOn(first.nc, clock), scope, clock));
    clock.advance(3_000);
    // Several census rounds (a second each) go unanswered.
    const asking = proxyOn(leader.nc, clock);
    for (let round = 0; round < 3; round++) {
      expect((await admit(asking, scope, clock)).kind).toBe("unavailable");
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    clock.advance(OUTAGE_GRACE_MS);
    expect((await admit(asking, scope, clock)).kind).toBe("held");
  }, 30_000);

  it("a leader whose term another replica claimed grants no new proxy: it cannot record it as a holder", async () => {
    const durable = uniqueId("consumption");
    const leader = await startReplica(DB, clock, { durable, leaseTtlMs: 1_000, quotaLeaseTtlMs: 2_000 });
    started.push(leader);
    const scope = makeCapped(10_000);
    await held(proxyOn(leader.nc, clock), scope, clock);
    // What a successor's load does before its census reads the holders.
    await (await UsageStore.open(leader.connection)).claimTerm(durable, "successor");
    expect((await admit(proxyOn(leader.nc, clock), scope, clock)).kind).toBe("unavailable");
  }, 30_000);
});
