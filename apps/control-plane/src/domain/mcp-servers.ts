import type { McpCredentialBody, SealedSecret, UpdateMcpServerBody } from "@agentnet/contracts";

/** How a credential is stored: its kind, and for a header its name and sealed value. */
export type StoredMcpCredential =
  | { credential_kind: "none" }
  | { credential_kind: "header"; credential_header: string; sealed_credential: SealedSecret }
  | { credential_kind: "per_user"; credential_header: string }
  | {
      credential_kind: "oauth_client_credentials";
      oauth_token_url: string;
      oauth_client_id: string;
      oauth_scope?: string;
      sealed_credential: SealedSecret;
    };

/** Every field a stored credential may have beside its kind: what another kind leaves behind is unset. */
const CREDENTIAL_FIELDS = [
  "credential_header",
  "sealed_credential",
  "oauth_token_url",
  "oauth_client_id",
  "oauth_scope",
] as const;

/**
 * What a PUT changes on a stored MCP server. name and url are replaced; every other field left out
 * keeps the stored value. A credential sent replaces the stored one whole: what it does not set of
 * the stored one is dropped, so no unused secret is left behind.
 */
export function mergeMcpServerUpdate(
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
  for (const field of CREDENTIAL_FIELDS) if (!(field in next)) unset[field] = 1;
  return { set, unset };
}
