import type { Caller } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { scopeToCaller } from "./scope";

const caller = (role: Caller["role"]): Caller => ({
  account_id: "acc",
  user_id: "me",
  role,
  group_ids: [],
  email: "me@example.com",
  name: "Me",
});

describe("scopeToCaller", () => {
  const query = { user_id: "someone", group_id: ["g"], model: ["m"] };
  it("leaves the filters of the account-wide grant alone", () => {
    for (const role of ["owner", "admin", "auditor"] as const)
      expect(scopeToCaller(caller(role), query)).toEqual(query);
  });
  it("forces a regular user's own id and drops their group filter", () => {
    expect(scopeToCaller(caller("user"), query)).toEqual({
      user_id: "me",
      group_id: undefined,
      model: ["m"],
    });
  });
});
