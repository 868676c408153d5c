import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OriginSlots } from "./origin-slots";

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

const never = () => new AbortController().signal;

describe("OriginSlots", () => {
  it("lets up to its limit in at once and no more", () => {
    const slots = new OriginSlots(2);
    expect(slots.tryTake()).toBe(true);
    expect(slots.tryTake()).toBe(true);
    expect(slots.tryTake()).toBe(false);
    expect(slots.inFlight).toBe(2);
    slots.release();
    expect(slots.inFlight).toBe(1);
    expect(slots.tryTake()).toBe(true);
  });

  it("hands a released slot to the longest waiting request, the slot staying taken", async () => {
    const slots = new OriginSlots(1);
    slots.tryTake();
    const order: string[] = [];
    const first = slots.wait(1_000, never()).then((got) => order.push(`first ${got}`));
    const second = slots.wait(1_000, never()).then((got) => order.push(`second ${got}`));
    expect(slots.waiting).toBe(2);
    slots.release();
    await first;
    expect(order).toEqual(["first true"]);
    expect(slots.inFlight).toBe(1);
    slots.release();
    await second;
    expect(order).toEqual(["first true", "second true"]);
    slots.release();
    expect(slots.inFlight).toBe(0);
    expect(slots.waiting).toBe(0);
  });

  it("gives up on a request that got no slot within its wait, and bounds the wait to that", async () => {
    const slots = new OriginSlots(1);
    slots.tryTake();
    let got: boolean | undefined;
    void slots.wait(500, never()).then((value) => {
      got = value;
    });
    await vi.advanceTimersByTimeAsync(499);
    expect(got).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(got).toBe(false);
    expect(slots.waiting).toBe(0);
    // The slot freed later is free, not owed to the request that gave up.
    slots.release();
    expect(slots.inFlight).toBe(0);
  });

  it("lets a waiting request go when its caller aborts, and skips it when a slot frees", async () => {
    const slots = new OriginSlots(1);
    slots.tryTake();
    const leaving = new AbortController();
    const left = slots.wait(1_000, leaving.signal);
    const staying = slots.wait(1_000, never());
    leaving.abort();
    expect(await left).toBe(false);
    slots.release();
    expect(await staying).toBe(true);
    expect(slots.inFlight).toBe(1);
  });

  it("lets nobody take a free slot ahead of a waiting request", async () => {
    const slots = new OriginSlots(1);
    slots.tryTake();
    const waiting = slots.wait(1_000, never());
    slots.release();
    expect(slots.tryTake()).toBe(false);
    expect(await waiting).toBe(true);
  });

  it("answers at once for a caller that already left", async () => {
    const slots = new OriginSlots(1);
    slots.tryTake();
    const gone = new AbortController();
    gone.abort();
    expect(await slots.wait(1_000, gone.signal)).toBe(false);
    expect(slots.waiting).toBe(0);
  });
});
