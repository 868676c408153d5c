import type { Caller } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { CallerCache } from "./callers";

const caller: Caller = {
  account_id: "acc",
  user_id: "usr",
  role: "user",
  group_ids: [],
  email: "a@example.com",
  name: "A",
};

describe("CallerCache", () => {
  it("serves a known caller after patienceMs when the lookup hangs, and the unknown waits for it", async () => {
    let answer: ((value: Caller | undefined) => void) | undefined;
    let hang = false;
    const cache = new CallerCache(
      () => (hang ? new Promise((resolve) => (answer = resolve)) : Promise.resolve(caller)),
      0,
      60_000,
      Date.now,
      20,
    );
    expect(await cache.get("known")).toEqual(caller);
    hang = true;
    const started = Date.now();
    expect(await cache.get("known")).toEqual(caller);
    expect(Date.now() - started).toBeLessThan(1_000);
    let unknownSettled = false;
    void cache.get("unknown").then(() => {
      unknownSettled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(unknownSettled).toBe(false);
    answer?.(caller);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(unknownSettled).toBe(true);
  });

  it("a known caller's revocation counts as soon as the lookup answers in time", async () => {
    let revoked = false;
    const cache = new CallerCache(async () => (revoked ? undefined : caller), 0, 60_000, Date.now, 1_000);
    expect(await cache.get("t")).toEqual(caller);
    revoked = true;
    expect(await cache.get("t")).toBeUndefined();
  });
});
