import type { CallersRevokedEvent } from "@agentnet/contracts";
import { Events } from "@agentnet/contracts";
import { connectTestBus, eventually, uniqueId } from "@agentnet/testkit";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { announceCallerRevocation, followCallerRevocations } from "./caller-revocations";

const revocation = (): CallersRevokedEvent => ({
  v: 1,
  account_id: uniqueId("acc"),
  whole_account: false,
  user_ids: [uniqueId("usr")],
  token_hashes: ["a".repeat(64)],
  at: new Date().toISOString(),
});

/** A cache stand-in recording what reached it. */
const recorder = () => {
  const seen: (CallersRevokedEvent | "distrust all" | "malformed")[] = [];
  return {
    seen,
    callers: {
      revoke: (event: CallersRevokedEvent) => seen.push(event),
      distrustAll: () => seen.push("distrust all"),
    },
    onMalformed: () => seen.push("malformed"),
  };
};

let controlPlane: NatsConnection;
let operator: NatsConnection;
beforeAll(async () => {
  controlPlane = await connectTestBus("control-plane");
  operator = await connectTestBus();
});
afterAll(async () => {
  await controlPlane.close();
  await operator.close();
});

describe("caller revocations", () => {
  it("once announced, reach every follower ahead of anything the server sends it afterwards", async () => {
    const followers = await Promise.all([connectTestBus("gateway-proxy"), connectTestBus("gateway-proxy")]);
    const records = followers.map((nc) => {
      const record = recorder();
      followCallerRevocations(nc, record.callers, record.onMalformed);
      return record;
    });
    await Promise.all(followers.map((nc) => nc.flush()));
    const event = revocation();
    await announceCallerRevocation(controlPlane, event);
    // A follower's own round trip to the server comes back after what the server queued for it.
    await Promise.all(followers.map((nc) => nc.flush()));
    for (const record of records) expect(record.seen).toEqual([event]);
    await Promise.all(followers.map((nc) => nc.close()));
  });

  it("distrust every cached caller when the connection comes back, since revocations may have been missed", async () => {
    const follower = await connectTestBus("api-gateway");
    const record = recorder();
    followCallerRevocations(follower, record.callers, record.onMalformed);
    await follower.reconnect();
    await eventually(() => record.seen.includes("distrust all"));
    await follower.close();
  });

  it("take an unreadable revocation for one that names everybody, and report it", async () => {
    const follower = await connectTestBus("gateway-proxy");
    const record = recorder();
    followCallerRevocations(follower, record.callers, record.onMalformed);
    await follower.flush();
    operator.publish(Events.callersRevoked, JSON.stringify({ v: 2, account_id: "acc" }));
    await operator.flush();
    await follower.flush();
    expect(record.seen).toEqual(["distrust all", "malformed"]);
    await follower.close();
  });
});
