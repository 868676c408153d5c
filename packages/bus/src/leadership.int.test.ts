import { connectTestBus, eventually, uniqueId } from "@agentnet/testkit";
import { jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { contendForLeadership, type NatsConnection } from "./index";

/**
 * Long enough that a busy machine (other test files start processes beside this one) does not
 * stall a renewal past it, and that "at once" (the standby's next attempt, a twelfth of it) differs
 * from "on expiry" even when that attempt is slow: a clean-clone run failed the hand-over at 2 s.
 */
const TTL_MS = 4_000;

/** A contender on its own connection that records what it was told. */
async function contender(key: string, ttlMs = TTL_MS, bucket?: string) {
  const nc: NatsConnection = await connectTestBus("lease-test");
  const events: string[] = [];
  const errors: string[] = [];
  const leadership = await contendForLeadership(nc, {
    key,
    ...(bucket ? { bucket } : {}),
    holder: uniqueId("holder"),
    ttlMs,
    onElected: async () => {
      events.push("elected");
    },
    onDeposed: async (reason) => {
      events.push(`deposed:${reason}`);
    },
    onError: (error) => errors.push(String(error)),
  });
  return { nc, events, errors, leadership };
}

describe("contendForLeadership", () => {
  it("elects one contender and hands over at once when it releases", async () => {
    const key = uniqueId("lease");
    const first = await contender(key);
    const second = await contender(key);
    expect([first.leadership.isLeader(), second.leadership.isLeader()]).toEqual([true, false]);
    // Renewals keep the lease well past its TTL.
    await new Promise((resolve) => setTimeout(resolve, TTL_MS * 2));
    expect(second.leadership.isLeader()).toBe(false);

    await first.leadership.release();
    expect(first.events).toEqual(["elected", "deposed:released"]);
    await eventually(() => second.leadership.isLeader(), TTL_MS);
    await second.leadership.release();
    await Promise.all([first.nc.drain(), second.nc.drain()]);
  });

  it("deposes a holder that cannot renew before a standby takes over", async () => {
    const key = uniqueId("lease");
    const first = await contender(key);
    const second = await contender(key);
    await first.nc.close();
    await eventually(() => first.events.includes("deposed:lost"));
    await eventually(() => second.leadership.isLeader());
    await first.leadership.release();
    await second.leadership.release();
    await second.nc.drain();
  });

  it("raises a bucket whose keys live shorter than a holder's TTL, and never shortens one", async () => {
    const bucket = uniqueId("leases");
    const maxAgeMs = async (nc: NatsConnection) =>
      (await (await jetstreamManager(nc)).streams.info(`KV_${bucket}`)).config.max_age / 1_000_000;
    const first = await contender(uniqueId("lease"), 3_000, bucket);
    expect(await maxAgeMs(first.nc)).toBe(3_000);
    const longer = await contender(uniqueId("lease"), 5_000, bucket);
    expect(await maxAgeMs(first.nc)).toBe(5_000);
    // A holder of a shorter TTL takes the bucket's, and says so.
    const shorter = await contender(uniqueId("lease"), 3_000, bucket);
    expect(await maxAgeMs(first.nc)).toBe(5_000);
    expect(shorter.errors.join("\n")).toContain("keys live 5 s");
    for (const each of [first, longer, shorter]) {
      await each.leadership.release();
      await each.nc.drain();
    }
  });
});
