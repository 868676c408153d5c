import { describe, expect, it } from "vitest";
import { RecentKeys } from "./recent-keys";

const HORIZON = 32_000;

describe("RecentKeys", () => {
  it("counts a key while it was added less than the horizon ago", () => {
    const keys = new RecentKeys(HORIZON);
    keys.add("a", 1_000);
    expect(keys.has("a", 1_000)).toBe(true);
    expect(keys.has("a", 1_000 + HORIZON - 1)).toBe(true);
    expect(keys.has("a", 1_000 + HORIZON)).toBe(false);
    expect(keys.has("b", 1_000)).toBe(false);
  });

  it("counts a key again from its latest addition", () => {
    const keys = new RecentKeys(HORIZON);
    keys.add("a", 0);
    keys.add("a", 20_000);
    expect(keys.has("a", HORIZON + 10_000)).toBe(true);
    expect(keys.has("a", 20_000 + HORIZON)).toBe(false);
  });

  it("forgets whole slices once their last key is past the horizon, and keeps the rest", () => {
    const keys = new RecentKeys(HORIZON);
    // One key a second for 100 s: slices of 1 s (horizon / 32).
    for (let second = 0; second < 100; second++) keys.add(`k${second}`, second * 1_000);
    keys.forget(100_000);
    for (let second = 0; second < 100; second++) {
      expect(keys.has(`k${second}`, 100_000)).toBe(second * 1_000 + HORIZON > 100_000);
    }
  });

  it("bounds what it keeps by forgetting as it adds", () => {
    const keys = new RecentKeys(HORIZON);
    for (let ms = 0; ms < 10 * HORIZON; ms += 10) keys.add(`k${ms}`, ms);
    // Nothing older than the horizon plus one slice is still held.
    expect(keys.has("k0", 0)).toBe(false);
    expect(keys.has(`k${10 * HORIZON - 10}`, 10 * HORIZON - 10)).toBe(true);
  });
});
