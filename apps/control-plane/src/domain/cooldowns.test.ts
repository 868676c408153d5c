import type { HeartbeatCooldown } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { ProxyCooldowns } from "./cooldowns";
import { ACTIVE_PROXY_WINDOW_MS } from "./settings";

const NOW = Date.parse("2026-11-26T20:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

const cooling = (overrides: Partial<HeartbeatCooldown> = {}): HeartbeatCooldown => ({
  account_id: "account-1",
  provider_id: "provider-1",
  cooling_until: iso(NOW + 30_000),
  last_error: "status 529",
  ...overrides,
});

describe("ProxyCooldowns", () => {
  it("shows a provider a proxy cools down, until when and its last error", () => {
    const cooldowns = new ProxyCooldowns();
    cooldowns.record("proxy-1", [cooling()], NOW);
    expect(cooldowns.of("account-1", "provider-1", NOW + 1_000)).toEqual({
      until: iso(NOW + 30_000),
      last_error: "status 529",
    });
    expect(cooldowns.of("account-1", "provider-2", NOW + 1_000)).toBeUndefined();
  });

  it("shows another account nothing for a provider id it does not own", () => {
    const cooldowns = new ProxyCooldowns();
    cooldowns.record("proxy-1", [cooling()], NOW);
    expect(cooldowns.of("account-2", "provider-1", NOW)).toBeUndefined();
  });

  it("a cooldown whose time has passed is over", () => {
    const cooldowns = new ProxyCooldowns();
    cooldowns.record("proxy-1", [cooling()], NOW);
    expect(cooldowns.of("account-1", "provider-1", NOW + 29_999)).toBeDefined();
    expect(cooldowns.of("account-1", "provider-1", NOW + 30_000)).toBeUndefined();
  });

  it("a proxy's next report replaces its last: a provider it no longer names is not cooling", () => {
    const cooldowns = new ProxyCooldowns();
    cooldowns.record("proxy-1", [cooling()], NOW);
    cooldowns.record("proxy-1", [], NOW + 10_000);
    expect(cooldowns.of("account-1", "provider-1", NOW + 10_000)).toBeUndefined();
  });

  it("a proxy that stops heartbeating stops counting, as its endpoints do", () => {
    const cooldowns = new ProxyCooldowns();
    const long = cooling({ cooling_until: iso(NOW + 10 * ACTIVE_PROXY_WINDOW_MS) });
    cooldowns.record("proxy-1", [long], NOW);
    expect(cooldowns.of("account-1", "provider-1", NOW + ACTIVE_PROXY_WINDOW_MS)).toBeDefined();
    expect(cooldowns.of("account-1", "provider-1", NOW + ACTIVE_PROXY_WINDOW_MS + 1)).toBeUndefined();
  });

  it("over proxies, the latest cooling_until wins, with that proxy's last error", () => {
    const cooldowns = new ProxyCooldowns();
    cooldowns.record("proxy-1", [cooling({ cooling_until: iso(NOW + 60_000), last_error: "timeout" })], NOW);
    cooldowns.record("proxy-2", [cooling({ cooling_until: iso(NOW + 30_000) })], NOW);
    expect(cooldowns.of("account-1", "provider-1", NOW)).toEqual({
      until: iso(NOW + 60_000),
      last_error: "timeout",
    });
    // Once proxy-1 falls silent, proxy-2's shorter cooldown is what is left.
    cooldowns.record("proxy-2", [cooling({ cooling_until: iso(NOW + 45_000) })], NOW + 20_000);
    expect(cooldowns.of("account-1", "provider-1", NOW + ACTIVE_PROXY_WINDOW_MS + 1)).toEqual({
      until: iso(NOW + 45_000),
      last_error: "status 529",
    });
  });
});
