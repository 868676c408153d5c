import type { McpCredential, McpCredentialBody, McpTransport } from "@agentnet/contracts";

export const TRANSPORT_LABELS: Record<McpTransport, string> = {
  streamable_http: "Streamable HTTP",
  sse: "HTTP+SSE (2024-11-05)",
};

/** The header most servers take their key in, offered when a server gets its first header. */
export const DEFAULT_CREDENTIAL_HEADER = "Authorization";

/** The MCP server form's credential: its kind, the header's name, and a value typed anew (or not). */
export interface CredentialDraft {
  kind: McpCredential["kind"];
  header_name: string;
  /** Write-only (a header's value, or an OAuth client's secret): empty on edit until typed anew. */
  value: string;
  /** OAuth client credentials: where tokens are minted, the client, and the scopes asked for. */
  token_url: string;
  client_id: string;
  scope: string;
}

/** A kind picked in the form's select. */
export const credentialKindOf = (picked: string): CredentialDraft["kind"] =>
  picked === "header" || picked === "per_user" || picked === "oauth_client_credentials" ? picked : "none";

export const credentialDraft = (stored: McpCredential | undefined): CredentialDraft => ({
  kind: stored?.kind ?? "none",
  header_name:
    stored?.kind === "header" || stored?.kind === "per_user" ? stored.header_name : DEFAULT_CREDENTIAL_HEADER,
  value: "",
  token_url: stored?.kind === "oauth_client_credentials" ? stored.token_url : "",
  client_id: stored?.kind === "oauth_client_credentials" ? stored.client_id : "",
  scope: stored?.kind === "oauth_client_credentials" ? (stored.scope ?? "") : "",
});

/** A credential as the list shows it: its kind and header name, never a value (reads have none). */
export const credentialSummary = (credential: McpCredential): string =>
  credential.kind === "header"
    ? `header ${credential.header_name}`
    : credential.kind === "per_user"
      ? `each member's own ${credential.header_name}`
      : credential.kind === "oauth_client_credentials"
        ? `OAuth client ${credential.client_id}`
        : "none";

/**
 * The body's `credential`, undefined when the stored one is kept (docs/API.md: a PUT without it
 * keeps the stored credential, one sent replaces it whole). "none" is always sent: it drops a
 * stored value. A header with a new value is sent whole. A header left empty keeps the stored one,
 * which only works for the header it is stored under: the value cannot be read back to send it
 * under another name, so it must be typed again; a server with no stored header needs one typed.
 */
export function credentialBody(
  draft: CredentialDraft,
  stored: McpCredential | undefined,
): { credential?: McpCredentialBody; error?: string } {
  if (draft.kind === "none") return { credential: { kind: "none" } };
  // Each member sets the value for themselves: the server stores only the header's name.
  if (draft.kind === "per_user") return { credential: { kind: "per_user", header_name: draft.header_name } };
  if (draft.kind === "oauth_client_credentials") return oauthBody(draft, stored);
  if (draft.value !== "") {
    return { credential: { kind: "header", header_name: draft.header_name, value: draft.value } };
  }
  if (stored?.kind !== "header") return { error: "enter the header's value" };
  if (stored.header_name !== draft.header_name) {
    return { error: `enter the value again to send it as ${draft.header_name || "another header"}` };
  }
  return {};
}

/**
 * An OAuth client's credential: sent whole with a new secret; kept when the secret is left empty
 * and nothing else of it changed (the secret cannot be read back to send it with other fields).
 */
function oauthBody(
  draft: CredentialDraft,
  stored: McpCredential | undefined,
): { credential?: McpCredentialBody; error?: string } {
  const scope = draft.scope.trim();
  if (draft.value !== "") {
    return {
      credential: {
        kind: "oauth_client_credentials",
        token_url: draft.token_url.trim(),
        client_id: draft.client_id.trim(),
        client_secret: draft.value,
        ...(scope ? { scope } : {}),
      },
    };
  }
  if (stored?.kind !== "oauth_client_credentials") return { error: "enter the client secret" };
  const unchanged =
    stored.token_url === draft.token_url.trim() &&
    stored.client_id === draft.client_id.trim() &&
    (stored.scope ?? "") === scope;
  return unchanged ? {} : { error: "enter the client secret again to change the OAuth client" };
}
