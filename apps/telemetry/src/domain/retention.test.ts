import { describe, expect, it } from "vitest";
import { planRetention, retentionCutoff, sweepHorizon } from "./retention";

const now = new Date("2025-03-10T12:00:00Z");

describe("retention", () => {
  it("keeps forever at 0 or less and applies the default to accounts without settings", () => {
    expect(retentionCutoff(0, now)).toBeUndefined();
    expect(retentionCutoff(-1, now)).toBeUndefined();
    expect(retentionCutoff(2, now)).toEqual(new Date("2025-03-08T12:00:00Z"));
    expect(retentionCutoff(undefined, now)).toEqual(new Date("2025-02-08T12:00:00Z"));
    expect(
      sweepHorizon(
        new Map([
          ["a", 2],
          ["b", 0],
        ]),
        now,
      ),
    ).toEqual(new Date("2025-03-08T12:00:00Z"));
  });

  it("drops a day only when every holder is past retention, else deletes row-wise once per account", () => {
    const retention = new Map([
      ["short", 2],
      ["forever", 0],
    ]);
    const plan = planRetention(
      [
        { partition: "20250301", accounts: ["short"] },
        { partition: "20250302", accounts: ["short", "forever"] },
        { partition: "20250308", accounts: ["short"] },
      ],
      retention,
      now,
    );
    expect(plan.dropPartitions).toEqual(["20250301"]);
    expect(plan.deletes).toEqual([{ account_id: "short", before: new Date("2025-03-08T12:00:00Z") }]);
    // "forever" loses nothing, so its sessions stay; "short" loses rows both ways.
    expect(plan.sessions).toEqual([{ account_id: "short", before: new Date("2025-03-08T12:00:00Z") }]);
  });

  it("does not drop the day the cutoff falls in", () => {
    const plan = planRetention([{ partition: "20250308", accounts: ["a"] }], new Map([["a", 2]]), now);
    expect(plan.dropPartitions).toEqual([]);
    expect(plan.deletes.map((d) => d.account_id)).toEqual(["a"]);
  });
});
