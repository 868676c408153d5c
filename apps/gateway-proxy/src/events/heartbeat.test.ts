import { ProxyHeartbeat } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { heartbeatMessages, ServedEndpoints } from "./heartbeat";

describe("heartbeatMessages", () => {
  it("is one message while the endpoints fit", () => {
    const served = new ServedEndpoints();
    served.record("a.gw.example.com", 0);
    const messages = heartbeatMessages("proxy-1", ["fixed.example.com"], served, 0, 1024 * 1024);
    expect(messages.map((m) => ProxyHeartbeat.parse(JSON.parse(m)).endpoints)).toEqual([
      ["fixed.example.com", "a.gw.example.com"],
    ]);
  });

  it("splits endpoints that would exceed the bus's limit over messages that each fit and together name all", () => {
    const served = new ServedEndpoints();
    const endpoints = Array.from({ length: 5_000 }, (_, i) => `${"e".repeat(200)}-${i}.gw.example.com`);
    for (const endpoint of endpoints) served.record(endpoint, 0);
    const limit = 256 * 1024;
    const messages = heartbeatMessages("proxy-1", [], served, 0, limit);
    expect(messages.length).toBeGreaterThan(1);
    for (const message of messages) expect(Buffer.byteLength(message)).toBeLessThanOrEqual(limit);
    const beats = messages.map((m) => ProxyHeartbeat.parse(JSON.parse(m)));
    expect(new Set(beats.map((beat) => beat.proxy_id))).toEqual(new Set(["proxy-1"]));
    expect(beats.flatMap((beat) => beat.endpoints)).toEqual(endpoints);
  });
});
