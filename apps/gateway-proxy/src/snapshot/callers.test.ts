import type { Caller, CallersRevokedEvent } from "@agentnet/contracts";
import { hashToken } from "@agentnet/service-kit";
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

  describe("revocations", () => {
    const revocation = (overrides: Partial<CallersRevokedEvent> = {}): CallersRevokedEvent => ({
      v: 1,
      account_id: caller.account_id,
      whole_account: false,
      user_ids: [],
      token_hashes: [],
      at: new Date().toISOString(),
      ...overrides,
    });
    /** A cache trusting answers for a minute, over a control-plane whose answers the test sets. */
    const cacheOver = () => {
      const answers = new Map<string, Caller | undefined>();
      let lookups = 0;
      let down = false;
      const cache = new CallerCache(
        async (token) => {
          lookups++;
          if (down) throw new Error("no responders");
          return answers.get(token);
        },
        60_000,
        600_000,
        Date.now,
        20,
      );
      return {
        cache,
        answers,
        lookups: () => lookups,
        setDown: (value: boolean) => {
          down = value;
        },
      };
    };

    it("a revoked user's caller is looked up again at once, and is not served from a control-plane outage", async () => {
      const { cache, answers, lookups, setDown } = cacheOver();
      answers.set("t", caller);
      expect(await cache.get("t")).toEqual(caller);
      cache.revoke(revocation({ user_ids: [caller.user_id] }));
      answers.delete("t");
      expect(await cache.get("t")).toBeUndefined();
      expect(lookups()).toBe(2);

      answers.set("u", caller);
      await cache.get("u");
      cache.revoke(revocation({ user_ids: [caller.user_id] }));
      setDown(true);
      await expect(cache.get("u")).rejects.toThrow("no responders");
    });

    it("a revoked token hash drops that token alone; other accounts and users keep their callers", async () => {
      const { cache, answers, lookups } = cacheOver();
      const other: Caller = { ...caller, user_id: "usr_other" };
      const elsewhere: Caller = { ...caller, account_id: "acc_other" };
      answers.set("t1", caller);
      answers.set("t2", caller);
      answers.set("t3", other);
      answers.set("t4", elsewhere);
      for (const token of ["t1", "t2", "t3", "t4"]) await cache.get(token);
      cache.revoke(revocation({ token_hashes: [hashToken("t1")] }));
      cache.revoke(revocation({ account_id: "acc_other", user_ids: [caller.user_id] }));
      answers.clear();
      expect(await cache.get("t1")).toBeUndefined();
      expect(await cache.get("t2")).toEqual(caller);
      expect(await cache.get("t3")).toEqual(other);
      expect(await cache.get("t4")).toBeUndefined();
      expect(lookups()).toBe(4 + 2);

      cache.revoke(revocation({ whole_account: true }));
      expect(await cache.get("t2")).toBeUndefined();
      expect(await cache.get("t3")).toBeUndefined();
    });

    it("a lookup under way when a revocation comes is neither shared with later requests nor cached", async () => {
      let answer: ((value: Caller | undefined) => void) | undefined;
      let lookups = 0;
      const cache = new CallerCache(
        () => {
          lookups++;
          return lookups === 1 ? new Promise((resolve) => (answer = resolve)) : Promise.resolve(undefined);
        },
        60_000,
        600_000,
      );
      const before = cache.get("t");
      cache.revoke(revocation({ user_ids: [caller.user_id] }));
      expect(await cache.get("t")).toBeUndefined();
      // Answered from the state before the revocation: its own request gets it, nobody after.
      answer?.(caller);
      expect(await before).toEqual(caller);
      // The answer cached is the one looked up after the revocation.
      expect(await cache.get("t")).toBeUndefined();
      expect(lookups).toBe(2);
    });

    it("a request waiting on a lookup the reconnect lost is served the answer of the lookup after it", async () => {
      let lose: ((error: Error) => void) | undefined;
      let lookups = 0;
      const cache = new CallerCache(
        () => {
          lookups++;
          // The second lookup is sent while NATS is down: the reconnect drops it, and it times out.
          return lookups === 2 ? new Promise((_, reject) => (lose = reject)) : Promise.resolve(caller);
        },
        0,
        600_000,
        Date.now,
        20,
      );
      expect(await cache.get("t")).toEqual(caller);
      const waiting = cache.get("t");
      cache.distrustAll();
      expect(await cache.get("t")).toEqual(caller);
      expect(await waiting).toEqual(caller);
      lose?.(new Error("no answer in time"));
      expect(lookups).toBe(3);
    });

    it("after a lost connection every caller is looked up again, and the last answers still serve an outage", async () => {
      const { cache, answers, lookups, setDown } = cacheOver();
      answers.set("t", caller);
      answers.set("u", caller);
      await cache.get("t");
      await cache.get("u");
      cache.distrustAll();
      answers.delete("t");
      expect(await cache.get("t")).toBeUndefined();
      setDown(true);
      expect(await cache.get("u")).toEqual(caller);
      expect(lookups()).toBe(4);
    });
  });
});
