import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RUN_MS, type Schedule, type Stats, World } from "./simulation";
import type { RequestPlan } from "./simulation-proxy";

const SCHEDULES = 2_000;

const schedules: fc.Arbitrary<Schedule> = fc.record({
  seed: fc.integer(),
  proxies: fc.integer({ min: 3, max: 4 }),
  capTokens: fc.integer({ min: 500, max: 8_000 }),
  capCostNanos: fc.integer({ min: 500_000, max: 8_000_000 }),
  capCalls: fc.integer({ min: 1, max: 12 }),
  startOffsetMs: fc.integer({ min: 0, max: 59_999 }),
  faults: fc.record({
    loss: fc.double({ min: 0, max: 0.3, noNaN: true }),
    duplication: fc.double({ min: 0, max: 0.5, noNaN: true }),
    maxDelayMs: fc.integer({ min: 1, max: 2_500 }),
    maxEventDelayMs: fc.integer({ min: 1, max: 2_000 }),
  }),
  outage: fc.option(
    fc.record({ atMs: fc.integer({ min: 0, max: RUN_MS }), lengthMs: fc.integer({ min: 500, max: 20_000 }) }),
    { freq: 2 },
  ),
  requests: fc.array(
    fc.record({
      proxy: fc.nat(3),
      atMs: fc.integer({ min: 0, max: RUN_MS }),
      worstTokens: fc.integer({ min: 1, max: 3_000 }),
      usedShare: fc.double({ min: 0, max: 1, noNaN: true }),
      durationMs: fc.integer({ min: 0, max: 15_000 }),
      stream: fc.boolean(),
      failed: fc.nat(9).map((n) => n === 0),
      toolCall: fc.nat(3).map((n) => n === 0),
    }),
    { minLength: 1, maxLength: 30 },
  ),
});

const request = (
  proxy: number,
  atMs: number,
  worstTokens: number,
  durationMs: number,
  overrides: Partial<RequestPlan> = {},
): RequestPlan => ({
  proxy,
  atMs,
  worstTokens,
  usedShare: 1,
  durationMs,
  stream: false,
  failed: false,
  ...overrides,
});
const noFaults = { loss: 0, duplication: 0, maxDelayMs: 50, maxEventDelayMs: 50 };
const unused = { usedShare: 0, failed: true };

/** Schedules found to break a promise, run before the random ones. */
const ONCE_BROKEN: Schedule[] = [
  // A request whose lease the leader replaced between its two asks: refused after a grant that fit.
  {
    seed: 0,
    proxies: 3,
    capTokens: 1_000,
    capCostNanos: 1_000_000,
    startOffsetMs: 52_000,
    faults: { ...noFaults, maxDelayMs: 98, maxEventDelayMs: 1 },
    outage: null,
    requests: [
      request(0, 0, 1, 0, unused),
      request(0, 29_826, 1, 0, unused),
      request(1, 25_905, 1, 0, unused),
      request(2, 11_418, 1, 0, unused),
      request(1, 28_001, 1, 1_498, unused),
      request(0, 13_523, 2_401, 3_492, { ...unused, stream: true }),
    ],
  },
  // A request that outlives its lease's TTL with no other request on it, and another proxy's.
  {
    seed: 1,
    proxies: 3,
    capTokens: 1_000,
    capCostNanos: 8_000_000,
    startOffsetMs: 0,
    faults: noFaults,
    outage: null,
    requests: [request(0, 0, 900, 15_000), request(1, 12_000, 900, 100)],
  },
  // A grant that reached a lease the proxy had just forgotten as expired, right before an outage.
  {
    seed: 806_789_634,
    proxies: 3,
    capTokens: 500,
    capCostNanos: 500_000,
    startOffsetMs: 45_743,
    faults: { ...noFaults, maxDelayMs: 1_992, maxEventDelayMs: 1 },
    outage: { atMs: 21_430, lengthMs: 3_501 },
    requests: [
      request(1, 20_001, 1, 0, unused),
      request(0, 0, 1, 0, unused),
      request(0, 14_258, 1, 0, unused),
      request(0, 725, 1, 3_104, { ...unused, stream: true }),
      request(0, 16_000, 1, 0, unused),
      request(1, 14_257, 1, 5_582, unused),
    ],
  },
  // A stream that runs past the last arrival: its leases are renewed as long as it runs.
  {
    seed: 151_971_760,
    proxies: 3,
    capTokens: 500,
    capCostNanos: 504_000,
    startOffsetMs: 20_500,
    faults: { ...noFaults, maxDelayMs: 531, maxEventDelayMs: 1 },
    outage: null,
    requests: [
      request(0, 10_443, 1, 0, unused),
      request(0, 39_500, 333, 4_252, { usedShare: 0.51, failed: true, stream: true }),
      request(0, 13_001, 1, 0, unused),
    ],
  },
];

describe("the caps protocol, simulated", () => {
  it("keeps its promises on random schedules of proxies, faults, outages and window ends", async () => {
    const runs: Stats[] = [];
    await fc.assert(
      fc.asyncProperty(schedules, async (schedule) => {
        runs.push(await new World(schedule).run());
      }),
      { numRuns: SCHEDULES, examples: ONCE_BROKEN.map((schedule) => [schedule]) },
    );
    const total = (field: keyof Stats) => runs.reduce((sum, stats) => sum + stats[field], 0);
    // The schedules reach every path the promises are about.
    for (const field of [
      "held",
      "heldWhileBusLost",
      "refused",
      "refusedToolCalls",
      "unavailable",
      "leaderRefusals",
      "cutStreams",
      "duplicateSettlements",
      "unleasedSettlements",
    ] as const) {
      expect(total(field), field).toBeGreaterThan(0);
    }
  }, 120_000);
});
