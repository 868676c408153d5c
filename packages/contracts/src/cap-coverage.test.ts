import { describe, expect, it } from "vitest";
import { limitsCounting, policyCovers, ruleTargets } from "./cap-coverage";
import type { Limits } from "./limits";

const limits: Limits = {
  token_limit: { enabled: true, group_cap: 1000, user_cap: 100, window_seconds: 3600 },
  budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
};
const aimedAt = (target_groups: string[], target_users: string[], enabled = true) => ({
  id: `rule-${target_groups.join("+")}-${target_users.join("+")}`,
  name: "rule",
  enabled,
  target_groups,
  target_users,
  limits,
});
const sourcedFrom = (source_groups: string[], withLimits = true) => ({
  id: `pol-${source_groups.join("+")}`,
  name: "policy",
  enabled: true,
  source_groups,
  ...(withLimits ? { limits } : {}),
});
const alice = { user_id: "usr-alice", group_ids: ["grp-eng", "grp-all"] };
const idsOf = (counting: { source_id: string }[]) => counting.map((c) => c.source_id);

describe("cap coverage", () => {
  it("a rule targets a caller through the user, one of their groups or the whole account, while enabled", () => {
    expect(ruleTargets(aimedAt([], []), alice)).toBe(true);
    expect(ruleTargets(aimedAt([], ["usr-alice"]), alice)).toBe(true);
    expect(ruleTargets(aimedAt(["grp-eng"], []), alice)).toBe(true);
    expect(ruleTargets(aimedAt(["grp-ops"], ["usr-bob"]), alice)).toBe(false);
    expect(ruleTargets(aimedAt([], [], false), alice)).toBe(false);
  });

  it("a policy covers a caller one of whose groups is a source group, while enabled", () => {
    expect(policyCovers(sourcedFrom(["grp-eng"]), alice.group_ids)).toBe(true);
    expect(policyCovers(sourcedFrom(["grp-ops"]), alice.group_ids)).toBe(false);
    expect(policyCovers({ ...sourcedFrom(["grp-eng"]), enabled: false }, alice.group_ids)).toBe(false);
  });

  it("counts a user's counters with the rules targeting them, then the covering policies with limits", () => {
    const counting = limitsCounting(
      { kind: "user", caller: alice },
      {
        policies: [sourcedFrom(["grp-eng"]), sourcedFrom(["grp-all"], false), sourcedFrom(["grp-ops"])],
        budget_rules: [aimedAt(["grp-ops"], []), aimedAt([], ["usr-alice"])],
      },
    );
    expect(idsOf(counting)).toEqual(["rule--usr-alice", "pol-grp-eng"]);
  });

  it("counts a group's counters with the rules aimed at it or at no group, and policies it is a source of", () => {
    const counting = limitsCounting(
      { kind: "group", group_id: "grp-eng" },
      {
        policies: [sourcedFrom(["grp-eng"]), sourcedFrom(["grp-ops"])],
        budget_rules: [aimedAt(["grp-eng"], []), aimedAt(["grp-ops"], []), aimedAt([], ["usr-bob"])],
      },
    );
    expect(idsOf(counting)).toEqual(["rule-grp-eng-", "rule--usr-bob", "pol-grp-eng"]);
  });
});
