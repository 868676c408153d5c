import type { GatewaySnapshot } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { SnapshotCache, SnapshotUnavailable } from "./cache";

const snapshot = (accountId: string): GatewaySnapshot => ({
  account_id: accountId,
  settings: null,
  providers: [],
  policies: [],
  guardrails: [],
  budget_rules: [],
  mcp_servers: [],
  generated_at: new Date(0).toISOString(),
});

/** A cache over a control-plane whose answers the test sets, counting its loads. */
const cacheOver = () => {
  let clock = 0;
  let loads = 0;
  let failing = true;
  const freshAsked: boolean[] = [];
  const cache = new SnapshotCache(
    async (accountId, fresh) => {
      loads++;
      freshAsked.push(fresh);
      if (failing) throw new Error("the account snapshot is too large to carry");
      return snapshot(accountId);
    },
    60_000,
    600_000,
    5_000,
    () => clock,
  );
  return {
    cache,
    loads: () => loads,
    freshAsked,
    heal: () => {
      failing = false;
    },
    advance: (ms: number) => {
      clock += ms;
    },
  };
};

describe("SnapshotCache", () => {
  it("answers a failed load again for failureMs: twenty refused requests cost one load", async () => {
    const { cache, loads } = cacheOver();
    // The first request loads; the others, sent meanwhile, share its load.
    const errors = await Promise.all(
      Array.from({ length: 20 }, () => cache.get("acc").catch((error: unknown) => error)),
    );
    for (const error of errors) expect(error).toBeInstanceOf(SnapshotUnavailable);
    const later = await cache.get("acc").catch((error: unknown) => error);
    expect(later).toMatchObject({ repeated: true, reason: "the account snapshot is too large to carry" });
    expect(loads()).toBe(1);
  });

  it("loads again once failureMs has passed, or at once when the account's configuration changes", async () => {
    const { cache, loads, heal, advance } = cacheOver();
    await expect(cache.get("acc")).rejects.toMatchObject({ repeated: false });
    advance(5_000);
    await expect(cache.get("acc")).rejects.toMatchObject({ repeated: false });
    expect(loads()).toBe(2);
    heal();
    cache.invalidate("acc");
    await expect(cache.get("acc")).resolves.toMatchObject({ snapshot: { account_id: "acc" } });
    expect(loads()).toBe(3);
  });

  it("asks for a fresh rendering on the first load after a change, and only then", async () => {
    const { cache, heal, freshAsked } = cacheOver();
    heal();
    await cache.get("acc");
    cache.invalidate("acc");
    await cache.get("acc");
    await cache.get("acc");
    cache.markStale();
    await cache.get("acc");
    // The configuration did not change (a reconnect): the rendering in hand is as good as any.
    expect(freshAsked).toEqual([false, true, false]);
  });
});
