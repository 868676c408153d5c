import type { Role } from "@agentnet/contracts";

/**
 * What the signed-in user may do to a user on the Team page. It mirrors the API's rules (the
 * control-plane's domain/access.ts) so the page offers only what the API would accept and says why
 * when it does not; the API still decides.
 */
export interface UserActions {
  /** Change role, groups and name. */
  edit: boolean;
  block: boolean;
  remove: boolean;
  /** See, create and revoke their API keys. */
  tokens: boolean;
  /** Why a writer may not block or delete this user, when they may not. */
  refusal: string | undefined;
}

interface Member {
  id: string;
  role: Role;
}

const WRITERS: readonly Role[] = ["owner", "admin"];
const ROLES: readonly Role[] = ["owner", "admin", "auditor", "user"];

export function userActions(me: Member, target: Member): UserActions {
  const writer = WRITERS.includes(me.role);
  const self = me.id === target.id;
  // Only an owner changes an owner (role, groups, block, delete) or touches an owner's keys.
  const ownerOnly = target.role === "owner" && me.role !== "owner";
  const edit = writer && !ownerOnly;
  const refusal = !writer
    ? undefined
    : self
      ? "You cannot block or delete yourself."
      : ownerOnly
        ? "Only an owner may change an owner."
        : undefined;
  return {
    edit,
    block: edit && !self,
    remove: edit && !self,
    tokens: self || me.role === "owner" || (me.role === "admin" && target.role !== "owner"),
    refusal,
  };
}

/** The roles a user may hand out: only an owner grants the owner role. */
export const assignableRoles = (myRole: Role): readonly Role[] =>
  myRole === "owner" ? ROLES : ROLES.filter((role) => role !== "owner");

/** The group every user belongs to; it cannot be renamed, deleted or picked. */
export const ALL_GROUP_NAME = "All";

/** Days a new API key lives, as the API takes them: a whole number from 1 to 365. */
export function tokenExpiryError(days: string): string | undefined {
  const value = Number(days);
  return Number.isInteger(value) && value >= 1 && value <= 365 && days.trim() !== ""
    ? undefined
    : "Enter a whole number of days from 1 to 365.";
}

/** A key past its expiration date is refused by the API; the list still shows it until revoked. */
export const isExpired = (expirationDate: string, now: Date): boolean =>
  new Date(expirationDate).getTime() <= now.getTime();
