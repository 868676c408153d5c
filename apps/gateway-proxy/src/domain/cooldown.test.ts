import { describe, expect, it } from "vitest";
import { Cooldowns } from "./cooldown";

const clock = () => {
  const time = { now: 1_000_000 };
  return { time, now: () => time.now };
};
const options = { failures: 3, windowMs: 10_000, cooldownMs: 30_000 };

describe("Cooldowns", () => {
  it("cools a provider down after N failures within the window", () => {
    const { time, now } = clock();
    const cooldowns = new Cooldowns(options, now);
    cooldowns.failed("acct", "p", "P", "status 503", 0);
    cooldowns.failed("acct", "p", "P", "status 503", 0);
    expect(cooldowns.cooling("p")).toBe(false);
    time.now += 1_000;
    cooldowns.failed("acct", "p", "P", "status 503", 0);
    expect(cooldowns.cooling("p")).toBe(true);
    expect(cooldowns.list()).toEqual([
      {
        account_id: "acct",
        provider_id: "p",
        provider: "P",
        cooling_until: new Date(time.now + 30_000).toISOString(),
        last_error: "status 503",
      },
    ]);
  });

  it("forgets failures older than the window", () => {
    const { time, now } = clock();
    const cooldowns = new Cooldowns(options, now);
    cooldowns.failed("acct", "p", "P", "timeout", 0);
    cooldowns.failed("acct", "p", "P", "timeout", 0);
    time.now += 10_001;
    cooldowns.failed("acct", "p", "P", "timeout", 0);
    expect(cooldowns.cooling("p")).toBe(false);
  });

  it("a 429 with a retry-after of at least the cooldown cools it for the retry-after", () => {
    const { time, now } = clock();
    const cooldowns = new Cooldowns(options, now);
    cooldowns.failed("acct", "p", "P", "status 429", 60_000);
    time.now += 59_000;
    expect(cooldowns.cooling("p")).toBe(true);
    time.now += 1_000;
    expect(cooldowns.cooling("p")).toBe(false);
  });

  it("after the cooldown one probe goes; its success ends the cooldown", () => {
    const { time, now } = clock();
    const cooldowns = new Cooldowns({ ...options, failures: 1 }, now);
    cooldowns.failed("acct", "p", "P", "connect_failed", 0);
    time.now += 30_000;
    expect(cooldowns.cooling("p")).toBe(false);
    cooldowns.attempting("p");
    expect(cooldowns.cooling("p")).toBe(true);
    cooldowns.succeeded("p");
    expect(cooldowns.cooling("p")).toBe(false);
    expect(cooldowns.list()).toEqual([]);
  });

  it("a failed probe cools it down again at once", () => {
    const { time, now } = clock();
    const cooldowns = new Cooldowns(options, now);
    for (let i = 0; i < 3; i++) cooldowns.failed("acct", "p", "P", "status 529", 0);
    time.now += 30_000;
    cooldowns.attempting("p");
    cooldowns.failed("acct", "p", "P", "status 529", 0);
    expect(cooldowns.cooling("p")).toBe(true);
    time.now += 29_999;
    expect(cooldowns.cooling("p")).toBe(true);
  });

  it("a probe that never reports frees the next one after another cooldown", () => {
    const { time, now } = clock();
    const cooldowns = new Cooldowns({ ...options, failures: 1 }, now);
    cooldowns.failed("acct", "p", "P", "timeout", 0);
    time.now += 30_000;
    cooldowns.attempting("p");
    time.now += 30_000;
    expect(cooldowns.cooling("p")).toBe(false);
  });
});
