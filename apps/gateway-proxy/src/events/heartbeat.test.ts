import { MAX_COOLDOWN_ERROR_LENGTH, MAX_HEARTBEAT_COOLDOWNS, ProxyHeartbeat } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import type { CoolingProvider } from "../domain/cooldown";
import { heartbeatMessages, ServedEndpoints } from "./heartbeat";

const NOW = Date.parse("2026-11-26T20:00:00.000Z");

const cooling = (i: number, overrides: Partial<CoolingProvider> = {}): CoolingProvider => ({
  account_id: `account-${i}`,
  provider_id: `provider-${i}`,
  provider: `Provider ${i}`,
  cooling_until: new Date(NOW + 1_000 * (i + 1)).toISOString(),
  last_error: "status 529",
  ...overrides,
});

const manyEndpoints = (served: ServedEndpoints) => {
  const endpoints = Array.from({ length: 5_000 }, (_, i) => `${"e".repeat(200)}-${i}.gw.example.com`);
  for (const endpoint of endpoints) served.record(endpoint, NOW);
  return endpoints;
};

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

  it("names the providers cooling down in its first message only, without the provider's name", () => {
    const served = new ServedEndpoints();
    const endpoints = manyEndpoints(served);
    const messages = heartbeatMessages("proxy-1", [], served, NOW, 256 * 1024, [cooling(1)]);
    const beats = messages.map((m) => ProxyHeartbeat.parse(JSON.parse(m)));
    expect(beats[0]?.cooling_providers).toEqual([
      {
        account_id: "account-1",
        provider_id: "provider-1",
        cooling_until: "2026-11-26T20:00:02.000Z",
        last_error: "status 529",
      },
    ]);
    expect(beats.slice(1).map((beat) => beat.cooling_providers)).toEqual(beats.slice(1).map(() => undefined));
    expect(beats.flatMap((beat) => beat.endpoints)).toEqual(endpoints);
  });

  it("says no provider is cooling with an empty list, and leaves out cooldowns already over", () => {
    const past = cooling(1, { cooling_until: new Date(NOW - 1).toISOString() });
    const [message] = heartbeatMessages("proxy-1", ["a.example.com"], new ServedEndpoints(), NOW, 1024, [
      past,
    ]);
    expect(ProxyHeartbeat.parse(JSON.parse(message ?? "")).cooling_providers).toEqual([]);
  });

  it("names at most the 200 cooling longest, longest first, each error cut to its bound", () => {
    const many = Array.from({ length: 300 }, (_, i) => cooling(i, { last_error: "x".repeat(5_000) }));
    const [message] = heartbeatMessages("proxy-1", [], new ServedEndpoints(), NOW, 1024 * 1024, many);
    const listed = ProxyHeartbeat.parse(JSON.parse(message ?? "")).cooling_providers ?? [];
    expect(listed).toHaveLength(MAX_HEARTBEAT_COOLDOWNS);
    expect(listed[0]?.provider_id).toBe("provider-299");
    expect(listed.at(-1)?.provider_id).toBe("provider-100");
    expect(listed.every((entry) => entry.last_error.length === MAX_COOLDOWN_ERROR_LENGTH)).toBe(true);
  });

  it("keeps every message within the limit with cooldowns and many endpoints", () => {
    const served = new ServedEndpoints();
    const endpoints = manyEndpoints(served);
    const many = Array.from({ length: 300 }, (_, i) => cooling(i, { last_error: "x".repeat(5_000) }));
    const limit = 256 * 1024;
    const messages = heartbeatMessages("proxy-1", [], served, NOW, limit, many);
    for (const message of messages) expect(Buffer.byteLength(message)).toBeLessThanOrEqual(limit);
    const beats = messages.map((m) => ProxyHeartbeat.parse(JSON.parse(m)));
    expect(beats[0]?.cooling_providers).toHaveLength(MAX_HEARTBEAT_COOLDOWNS);
    expect(beats.flatMap((beat) => beat.endpoints)).toEqual(endpoints);
  });

  it("leaves out the shortest cooldowns when even the first message could not hold them all", () => {
    const many = Array.from({ length: 300 }, (_, i) => cooling(i, { last_error: "x".repeat(5_000) }));
    const limit = 16 * 1024;
    const messages = heartbeatMessages("proxy-1", ["a.example.com"], new ServedEndpoints(), NOW, limit, many);
    for (const message of messages) expect(Buffer.byteLength(message)).toBeLessThanOrEqual(limit);
    const listed = ProxyHeartbeat.parse(JSON.parse(messages[0] ?? "")).cooling_providers ?? [];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.length).toBeLessThan(MAX_HEARTBEAT_COOLDOWNS);
    expect(listed[0]?.provider_id).toBe("provider-299");
    expect(messages.flatMap((m) => ProxyHeartbeat.parse(JSON.parse(m)).endpoints)).toEqual(["a.example.com"]);
  });
});
