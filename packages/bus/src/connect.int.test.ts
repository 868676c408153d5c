import { isolatedNats, uniqueId } from "@agentnet/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { connectBus, contendForLeadership, ensureAlertsStream, type NatsConnection } from "./index";

/** What `connectBus` makes of its options against a single server (a cluster: `cluster.int.test.ts`). */
const open: NatsConnection[] = [];
afterAll(async () => {
  await Promise.all(open.map((nc) => nc.close()));
});

describe("a tls:// server", () => {
  it("is joined only over TLS", async () => {
    const nats = await isolatedNats();
    const plainOnly = nats.url.replace("nats://", "tls://");
    await expect(connectBus({ url: plainOnly, service: "cli", auth: nats.operator })).rejects.toThrow(/tls/i);
  });
});

describe("replicas a single server cannot keep", () => {
  it("refuses to start with a message naming AGN_STREAM_REPLICAS", async () => {
    const nats = await isolatedNats();
    const nc = await connectBus({ url: nats.url, service: "cli", auth: nats.operator, streamReplicas: 3 });
    open.push(nc);
    await expect(ensureAlertsStream(nc)).rejects.toThrow(
      /NATS refused stream AGN_ALERTS on 3 server\(s\) \(AGN_STREAM_REPLICAS=3\): replicas > 1 not supported/,
    );
    const lease = contendForLeadership(nc, {
      key: uniqueId("lease"),
      holder: uniqueId("holder"),
      onElected: async () => undefined,
      onDeposed: async () => undefined,
      onError: () => undefined,
    });
    await expect(lease).rejects.toThrow(
      /NATS refused stream KV_agn_leases on 3 server\(s\) \(AGN_STREAM_REPLICAS=3\)/,
    );
  });
});
