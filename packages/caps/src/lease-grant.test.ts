import type { LeaseAsk } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { askGrant, leaseGrant, type MeasureAsk } from "./lease-grant";

/** A first ask for 100 under a cap of 1,000 that nothing else uses. */
const measure = (overrides: Partial<MeasureAsk> = {}): MeasureAsk => ({
  cap: 1_000,
  committedInCounter: 0,
  granted: 0,
  settled: 0,
  contribution: 0,
  proxyCommitted: 0,
  need: 100,
  leases: 1,
  ...overrides,
});

describe("leaseGrant", () => {
  it("grants what is needed plus free / (2 × leases) of the headroom left", () => {
    expect(leaseGrant(measure())).toEqual({ fits: true, granted: 100 + 450 });
    expect(leaseGrant(measure({ leases: 2 }))).toEqual({ fits: true, granted: 100 + 225 });
  });

  it("refuses what passes the headroom other leases and settled usage leave, keeping the grant as it was", () => {
    // Others commit 800: this lease (granted 100, nothing settled) can grow to 200, not 250.
    const ask = measure({ committedInCounter: 900, granted: 100, contribution: 100, proxyCommitted: 100 });
    expect(leaseGrant({ ...ask, need: 150 })).toEqual({ fits: false, granted: 100 });
    expect(leaseGrant({ ...ask, need: 100 })).toEqual({ fits: true, granted: 200 });
  });

  it("lets a lease grow by what of it is settled: settled usage left its contribution for the counter", () => {
    // Granted 300, 200 settled: the counter holds 200 settled + 100 contribution + 500 of others.
    const ask = measure({ committedInCounter: 800, granted: 300, settled: 200, contribution: 100 });
    expect(leaseGrant({ ...ask, proxyCommitted: 300, need: 200 })).toEqual({ fits: true, granted: 500 });
    expect(leaseGrant({ ...ask, proxyCommitted: 300, need: 201 }).fits).toBe(false);
  });

  it("never shrinks a grant below what the proxy already has, even under a lowered cap", () => {
    const ask = measure({ cap: 300, committedInCounter: 600, granted: 600, contribution: 600 });
    expect(leaseGrant({ ...ask, proxyCommitted: 100, need: 0 })).toEqual({ fits: true, granted: 600 });
  });

  it("leases nothing on a measure without a cap", () => {
    expect(leaseGrant(measure({ cap: undefined, need: 10 ** 9 }))).toEqual({ fits: true, granted: 0 });
  });
});

const COUNTER = {
  dimension_kind: "user",
  dimension_id: "u1",
  window_seconds: 3600,
  window_start: 0,
} as const;

const leaseAsk = (overrides: Partial<LeaseAsk> = {}): LeaseAsk => ({
  counter: { ...COUNTER, lease_id: "lease-1" },
  cap_tokens: 1_000,
  committed: { tokens: 0, cost_nanos: 0, calls: 0 },
  need: { tokens: 100, cost_nanos: 0, calls: 0 },
  ...overrides,
});

const NOTHING_LEASED = { tokens: 0, costNanos: 0, calls: 0 };

describe("askGrant", () => {
  it("leases tool calls as a measure of their own: a call past the calls cap does not fit", () => {
    const ask = leaseAsk({
      cap_tokens: undefined,
      cap_calls: 3,
      need: { tokens: 0, cost_nanos: 0, calls: 1 },
    });
    expect(askGrant(ask, { tokens: 0, costNanos: 0, calls: 2 }, undefined, 1)).toEqual({
      fits: true,
      granted: { tokens: 0, costNanos: 0, calls: 1 },
    });
    expect(askGrant(ask, { tokens: 0, costNanos: 0, calls: 3 }, undefined, 1).fits).toBe(false);
  });

  it("fits only when every capped measure fits", () => {
    const ask = leaseAsk({ cap_cost_nanos: 1_000, need: { tokens: 100, cost_nanos: 1_001, calls: 0 } });
    expect(askGrant(ask, NOTHING_LEASED, undefined, 1).fits).toBe(false);
    expect(
      askGrant({ ...ask, need: { tokens: 100, cost_nanos: 1_000, calls: 0 } }, NOTHING_LEASED, undefined, 1)
        .fits,
    ).toBe(true);
  });

  it("starts a lease the leader does not know from nothing: what the proxy says it committed is not counted", () => {
    const ask = leaseAsk({ committed: { tokens: 400, cost_nanos: 0, calls: 0 } });
    expect(askGrant(ask, NOTHING_LEASED, undefined, 1)).toEqual({
      fits: true,
      granted: { tokens: 100 + 450, costNanos: 0, calls: 0 },
    });
  });

  it("shrinks a lease to what its proxy committed on the capped measures, whatever the cap", () => {
    const ask = leaseAsk({
      shrink: true,
      committed: { tokens: 5_000, cost_nanos: 7, calls: 0 },
      need: { tokens: 0, cost_nanos: 0, calls: 0 },
    });
    const lease = {
      granted: { tokens: 6_000, costNanos: 0, calls: 0 },
      settled: NOTHING_LEASED,
      contribution: NOTHING_LEASED,
    };
    expect(askGrant(ask, { tokens: 6_000, costNanos: 0, calls: 0 }, lease, 1)).toEqual({
      fits: true,
      granted: { tokens: 5_000, costNanos: 0, calls: 0 },
    });
  });
});
