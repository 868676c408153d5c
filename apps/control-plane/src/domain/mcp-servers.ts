import type { McpCredentialBody, SealedSecret, UpdateMcpServerBody } from "@agentnet/contracts";

/** How a credential is stored: its kind, and for a header its name and sealed value. */
export type StoredMcpCredential =
  | { credential_kind: "none" }
  | { credential_kind: "header"; credential_header: string; sealed_credential: SealedSecret }
  | { credential_kind: "per_user"; credential_header: string };

/**
 * What a PUT changes on a stored MCP server. name and url are replaced; every other field left out
 * keeps the stored value. A credential sent replaces the stored one whole, and one that is not a
 * shared header drops the sealed value rather than leaving an unused secret behind.
 */
export function mergeMcpServerUpdate(
  stored: { credential_kind: StoredMcpCredential["credential_kind"] },
  body: UpdateMcpServerBody,
  sealCredential: (credential: McpCredentialBody) => StoredMcpCredential,
): { set: Record<string, unknown>; unset: Record<string, 1> } {
  const { credential, ...fields } = body;
  const set: Record<string, unknown> = Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  );
  if (credential === undefined) return { set, unset: {} };
  const next = sealCredential(credential);
  Object.assign(set, next);
  const unset: Record<string, 1> = {};
  if (next.credential_kind !== "header" && stored.credential_kind === "header") unset.sealed_credential = 1;
  if (next.credential_kind === "none" && stored.credential_kind !== "none") unset.credential_header = 1;
  return { set, unset };
}
