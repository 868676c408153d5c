import { describe, expect, it } from "vitest";
import { assignableRoles, isExpired, tokenExpiryError, userActions } from "./team-access";

const owner = { id: "o1", role: "owner" as const };
const otherOwner = { id: "o2", role: "owner" as const };
const admin = { id: "a1", role: "admin" as const };
const auditor = { id: "au1", role: "auditor" as const };
const member = { id: "u1", role: "user" as const };

describe("userActions", () => {
  it("lets an owner change, block, delete and manage the keys of anyone else", () => {
    expect(userActions(owner, otherOwner)).toEqual({
      edit: true,
      block: true,
      remove: true,
      tokens: true,
      refusal: undefined,
    });
    expect(userActions(owner, member).remove).toBe(true);
  });

  it("never offers blocking or deleting yourself, and says why", () => {
    expect(userActions(admin, admin)).toEqual({
      edit: true,
      block: false,
      remove: false,
      tokens: true,
      refusal: "You cannot block or delete yourself.",
    });
  });

  it("keeps an admin away from owners and their keys", () => {
    expect(userActions(admin, owner)).toEqual({
      edit: false,
      block: false,
      remove: false,
      tokens: false,
      refusal: "Only an owner may change an owner.",
    });
    expect(userActions(admin, member).tokens).toBe(true);
  });

  it("gives auditors and members only their own keys, without a refusal to show", () => {
    expect(userActions(auditor, member)).toEqual({
      edit: false,
      block: false,
      remove: false,
      tokens: false,
      refusal: undefined,
    });
    expect(userActions(member, member).tokens).toBe(true);
  });
});

describe("assignableRoles", () => {
  it("offers the owner role to owners only", () => {
    expect(assignableRoles("owner")).toEqual(["owner", "admin", "auditor", "user"]);
    expect(assignableRoles("admin")).toEqual(["admin", "auditor", "user"]);
  });
});

describe("tokenExpiryError", () => {
  it("accepts whole days from 1 to 365", () => {
    expect(tokenExpiryError("1")).toBeUndefined();
    expect(tokenExpiryError("365")).toBeUndefined();
  });

  it.each(["", "0", "366", "1.5", "ten"])("refuses %j", (days) => {
    expect(tokenExpiryError(days)).toBe("Enter a whole number of days from 1 to 365.");
  });
});

describe("isExpired", () => {
  it("counts a key as expired from its expiration instant on", () => {
    const now = new Date("2031-01-01T10:00:00Z");
    expect(isExpired("2031-01-01T10:00:00Z", now)).toBe(true);
    expect(isExpired("2031-01-01T10:00:01Z", now)).toBe(false);
  });
});
