import { describe, expect, it } from "vitest";
import { AdmissionWatch } from "./admissions";

const watch = (maxPending = 100) => new AdmissionWatch({ orphanAfterMs: 1_000, maxPending });

describe("AdmissionWatch", () => {
  it("gives the admissions of a proxy silent for orphanAfterMs, once, and nobody else's", () => {
    const admissions = watch();
    admissions.admitted("p1", "r1", "e1", 0);
    admissions.admitted("p1", "r2", "e2", 100);
    admissions.admitted("p2", "r3", "e3", 100);
    admissions.heard("p2", 900);
    expect(admissions.orphans(1_099)).toEqual([]);
    expect(admissions.orphans(1_100)).toEqual(["e1", "e2"]);
    expect(admissions.orphans(1_500)).toEqual([]);
    expect(admissions.orphans(1_900)).toEqual(["e3"]);
    expect(admissions.size).toBe(0);
  });

  it("forgets admissions whose events arrived", () => {
    const admissions = watch();
    admissions.admitted("p1", "r1", "e1", 0);
    admissions.admitted("p1", "r2", "e2", 0);
    admissions.accounted(["r1", "unknown"]);
    expect(admissions.orphans(5_000)).toEqual(["e2"]);
  });

  it("a heartbeat keeps a proxy's long requests from being taken for orphans", () => {
    const admissions = watch();
    admissions.admitted("p1", "r1", "e1", 0);
    for (let at = 500; at <= 10_000; at += 500) {
      admissions.heard("p1", at);
      expect(admissions.orphans(at + 999)).toEqual([]);
    }
  });

  it("after being cut off itself, takes nobody for dead before hearing them again", () => {
    const admissions = watch();
    admissions.admitted("p1", "r1", "e1", 0);
    admissions.heardEveryone(5_000);
    expect(admissions.orphans(5_500)).toEqual([]);
    expect(admissions.orphans(6_000)).toEqual(["e1"]);
  });

  it("keeps at most maxPending admissions, dropping the oldest and counting them", () => {
    const admissions = watch(2);
    admissions.admitted("p1", "r1", "e1", 0);
    admissions.admitted("p1", "r2", "e2", 0);
    admissions.admitted("p1", "r3", "e3", 0);
    expect(admissions.dropped).toBe(1);
    expect(admissions.orphans(1_000)).toEqual(["e2", "e3"]);
  });
});
