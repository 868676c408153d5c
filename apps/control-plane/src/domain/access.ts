import { type Caller, canWriteConfig, forbidden, hasAccountWideGrant, type Role } from "@agentnet/contracts";

/** Reads of account configuration: owner, admin and auditor. */
export function requireAccountWideGrant(caller: Caller): void {
  if (!hasAccountWideGrant(caller.role))
    throw forbidden("reading this needs the owner, admin or auditor role");
}

/** Changes to account configuration: owner and admin. */
export function requireWriter(caller: Caller): void {
  if (!canWriteConfig(caller.role)) throw forbidden("changing this needs the owner or admin role");
}

/**
 * Minting a credential (an API token, an agent credential) needs more than a short-lived proxy
 * token: one that leaked would otherwise outlive its 15 minutes as a credential of its own.
 */
export function requireLongLivedCredential(caller: Caller): void {
  if (caller.agent_credential_id) {
    throw forbidden("a short-lived agent token cannot mint credentials; use your API token or the dashboard");
  }
}

export function requireOwner(caller: Caller): void {
  if (caller.role !== "owner") throw forbidden("only account owners may do this");
}

/**
 * Whose tokens a caller may see, create or revoke: their own always; an owner anyone's; an admin
 * anyone's but an owner's, so an admin cannot mint a token that acts as an owner.
 */
export function requireTokenAccess(caller: Caller, target: { id: string; role: Role }): void {
  if (caller.user_id === target.id) return;
  if (caller.role === "owner") return;
  if (caller.role === "admin" && target.role !== "owner") return;
  throw forbidden("you may manage only your own tokens");
}

/** Only an owner hands out or takes away the owner role, and only an owner changes an owner. */
export function requireRoleChangeAllowed(caller: Caller, from: Role | undefined, to: Role): void {
  requireWriter(caller);
  if ((to === "owner" || from === "owner") && caller.role !== "owner") {
    throw forbidden("only an owner may grant, change or remove the owner role");
  }
}
