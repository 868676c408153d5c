import type { LeaseAsk, LeaseGrant, ReservedCounter } from "@agentnet/contracts";
import { makeEvent } from "@agentnet/testkit";
import { describe, expect, it } from "vitest";
import { CounterBook } from "./counter-book";
import { chainId, counterKeyOf } from "./counters";

const NOW = Date.UTC(2031, 0, 1, 10, 30, 0);
const TTL = 6_000;
const HOUR_START = Date.UTC(2031, 0, 1, 10, 0, 0) / 1000;
const ACCOUNT = "acc-1";

let ids = 0;
const book = () => new CounterBook(() => `lease-${++ids}`, 30_000);

const counter = (dimension_id = "u1", dimension_kind: "user" | "group" = "user"): ReservedCounter => ({
  dimension_kind,
  dimension_id,
  window_seconds: 3600,
  window_start: HOUR_START,
});

type AskOverrides = Partial<Omit<LeaseAsk, "committed">> & { tokens?: number; committed?: number };
const ask = (overrides: AskOverrides = {}): LeaseAsk => {
  const { tokens = 100, committed = 0, ...rest } = overrides;
  return {
    counter: counter(),
    cap_tokens: 1_000,
    committed: { tokens: committed, cost_nanos: 0, calls: 0 },
    need: { tokens, cost_nanos: 0, calls: 0 },
    ...rest,
  };
};

const grant = (counters: CounterBook, proxy: string, asks: LeaseAsk[], now = NOW) =>
  counters.grantLeases({ account_id: ACCOUNT, proxy_id: proxy, asks }, now, TTL);

/** A request of the account that used 50 tokens and $0.0005, counted on `counters`. */
const eventOn = (counters: ReservedCounter[]) =>
  makeEvent({
    account_id: ACCOUNT,
    reserved_counters: counters,
    input_tokens: 30,
    output_tokens: 20,
    total_tokens: 50,
    cost_usd: 0.0005,
  });

const only = (grants: LeaseGrant[]): LeaseGrant => {
  const [first] = grants;
  if (!first) throw new Error("expected a grant");
  return first;
};

/** What the user's counter commits, undefined while the book has no such counter. */
const committedTokens = (counters: CounterBook) =>
  counters.counter(counterKeyOf(ACCOUNT, counter()))?.committed_tokens;

describe("CounterBook.grantLeases", () => {
  it("grants what is needed plus a share of the free headroom, and refuses what passes the cap", () => {
    const counters = book();
    const first = only(grant(counters, "p1", [ask({ tokens: 100 })]));
    // 100 needed + half of the 900 left.
    expect(first).toMatchObject({ fits: true, granted: { tokens: 550 } });
    // Another proxy shares the 450 left with the first: 100 + 350 / (2 × 2 leases).
    const second = only(grant(counters, "p2", [ask({ tokens: 100 })]));
    expect(second).toMatchObject({ fits: true, granted: { tokens: 187 } });
    expect(committedTokens(counters)).toBe(737);
    // The first proxy wants 500 more on top of its 550: at most 1,000 − 187 can be its lease.
    const refused = only(
      grant(counters, "p1", [
        ask({ tokens: 500, committed: 550, counter: { ...counter(), lease_id: first.lease_id } }),
      ]),
    );
    expect(refused).toMatchObject({ fits: false, granted: { tokens: 550 }, lease_id: first.lease_id });
    expect(committedTokens(counters)).toBe(737);
  });

  it("refused while another proxy's lease holds headroom: the counter is to be reclaimed, and its grants carry no share for a TTL", () => {
    const counters = book();
    const first = only(grant(counters, "p1", [ask({ tokens: 100 })]));
    expect(first).toMatchObject({ fits: true, granted: { tokens: 550 } });
    // 450 are free, 450 parked at p1 (its share): 500 do not fit, though only 100 are in use.
    expect(only(grant(counters, "p2", [ask({ tokens: 500 })])).fits).toBe(false);
    const id = chainId(counterKeyOf(ACCOUNT, counter()));
    expect(counters.takeReclaims()).toEqual([id]);
    expect(counters.takeReclaims()).toEqual([]);
    // p1 gives back what it has not committed; p2 then gets what it needs and no share.
    const named = { ...counter(), lease_id: first.lease_id };
    grant(counters, "p1", [ask({ tokens: 0, committed: 100, shrink: true, counter: named })]);
    expect(only(grant(counters, "p2", [ask({ tokens: 500 })]))).toMatchObject({
      fits: true,
      granted: { tokens: 500 },
    });
    // A TTL later, shares are back.
    counters.forget(NOW + TTL);
    expect(only(grant(counters, "p3", [ask({ tokens: 100 })], NOW + TTL))).toMatchObject({
      fits: true,
      granted: { tokens: 100 + Math.floor(300 / 6) },
    });
  });

  it("refused with no other lease on the counter: nothing to reclaim", () => {
    const counters = book();
    expect(only(grant(counters, "p1", [ask({ tokens: 1_001 })])).fits).toBe(false);
    expect(counters.takeReclaims()).toEqual([]);
  });

  it("is all or nothing across the counters of one ask", () => {
    const counters = book();
    const grants = grant(counters, "p1", [
      ask({ counter: counter("u1"), tokens: 100 }),
      ask({ counter: counter("g1", "group"), tokens: 100, cap_tokens: 50 }),
    ]);
    expect(grants.map((g) => g.fits)).toEqual([true, false]);
    expect(grants.every((g) => g.lease_id === undefined)).toBe(true);
    expect(committedTokens(counters)).toBeUndefined();
  });

  it("moves settled usage out of the lease that admitted it: the counter's total stays put", () => {
    const counters = book();
    const lease = only(grant(counters, "p1", [ask({ tokens: 100 })]));
    const event = eventOn([{ ...counter(), lease_id: lease.lease_id }]);
    counters.commit(counters.prepare([event], NOW), NOW);
    // 550 granted: 50 settled + 500 still leased.
    expect(committedTokens(counters)).toBe(550);
    const renewed = only(
      grant(counters, "p1", [
        ask({ tokens: 0, committed: 50, counter: { ...counter(), lease_id: lease.lease_id } }),
      ]),
    );
    expect(renewed.used).toEqual({ tokens: 50, cost_nanos: 500_000, calls: 0 });
  });

  it("shrinks a lease to what its proxy committed, and ends it once that is all settled", () => {
    const counters = book();
    const lease = only(grant(counters, "p1", [ask({ tokens: 100 })]));
    const named = { ...counter(), lease_id: lease.lease_id };
    expect(
      only(grant(counters, "p1", [ask({ tokens: 0, committed: 50, shrink: true, counter: named })])),
    ).toMatchObject({
      fits: true,
      granted: { tokens: 50 },
    });
    expect(committedTokens(counters)).toBe(50);
    const event = eventOn([named]);
    counters.commit(counters.prepare([event], NOW), NOW);
    expect(committedTokens(counters)).toBe(50);
    grant(counters, "p1", [ask({ tokens: 0, committed: 50, shrink: true, counter: named })]);
    // Ended: the next ask naming it starts a new lease.
    const next = only(grant(counters, "p1", [ask({ tokens: 10, committed: 50, counter: named })]));
    expect(next.lease_id).not.toBe(lease.lease_id);
  });

  it("frees an expired lease's headroom (its proxy stopped renewing it)", () => {
    const counters = book();
    grant(counters, "p1", [ask({ tokens: 900 })]);
    expect(only(grant(counters, "p2", [ask({ tokens: 200 })])).fits).toBe(false);
    expect(counters.expire(NOW + TTL)).toBe(1);
    expect(only(grant(counters, "p2", [ask({ tokens: 200 })], NOW + TTL)).fits).toBe(true);
  });

  it("starts a lease over when the proxy names one this leader does not know", () => {
    const counters = book();
    const stale = only(
      grant(counters, "p1", [
        ask({ tokens: 100, committed: 400, counter: { ...counter(), lease_id: "gone" } }),
      ]),
    );
    // A new lease covers the need alone: the proxy starts over on it.
    expect(stale).toMatchObject({ fits: true, granted: { tokens: 550 } });
    expect(stale.lease_id).not.toBe("gone");
  });

  it("leases nothing for a measure without a cap", () => {
    const counters = book();
    const lease = only(grant(counters, "p1", [ask({ tokens: 100, cap_cost_nanos: undefined })]));
    expect(lease.granted.cost_nanos).toBe(0);
  });
});
