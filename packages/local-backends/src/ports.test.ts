import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort, freePorts, portIsFree, portsOutside } from "./ports";

const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
  .trim()
  .split(/\s+/)
  .map(Number);

describe("freePort", () => {
  it("gives a port outside the ephemeral range, with room for a few in a row above it, that a server can listen on", async () => {
    for (let round = 0; round < 20; round++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port + 8 < (low ?? 32_768) || port > (high ?? 60_999)).toBe(true);
      expect(await portIsFree("127.0.0.1", port)).toBe(true);
    }
  });

  it("freePorts gives distinct ports, none of those excluded", async () => {
    const excluded = await freePorts(3);
    const ports = await freePorts(5, excluded);
    expect(new Set(ports).size).toBe(5);
    expect(ports.filter((port) => excluded.includes(port))).toEqual([]);
  });
});

describe("portsOutside", () => {
  it("is the stretches below and above the ephemeral range, each leaving 32 ports above it", () => {
    expect(portsOutside({ low: 32_768, high: 60_999 })).toEqual([
      { from: 10_000, count: 22_736 },
      { from: 61_000, count: 4_504 },
    ]);
  });

  it("is what is left when the range reaches the top or starts low, and nothing when it spans everything", () => {
    expect(portsOutside({ low: 40_000, high: 65_535 })).toEqual([{ from: 10_000, count: 29_968 }]);
    expect(portsOutside({ low: 10_020, high: 60_999 })).toEqual([{ from: 61_000, count: 4_504 }]);
    expect(portsOutside({ low: 1_024, high: 65_535 })).toEqual([]);
  });
});

describe("portIsFree", () => {
  it("says no for a port a server listens on, yes once it has closed", async () => {
    const server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    expect(await portIsFree("127.0.0.1", port)).toBe(false);
    await new Promise((resolve) => server.close(resolve));
    expect(await portIsFree("127.0.0.1", port)).toBe(true);
  });
});
