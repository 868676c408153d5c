import type { IdentityProvider, IdentityProviderBody } from "@agentnet/contracts";

/** The roles a user made by sign-in may get (never owner). */
export type SignInRole = IdentityProviderBody["default_role"];
export const SIGN_IN_ROLES: readonly SignInRole[] = ["user", "auditor", "admin"];

/** The identity provider form as typed: the domains as one text, the secret empty unless replaced. */
export interface IdentityProviderDraft {
  issuer: string;
  client_id: string;
  client_secret: string;
  allowed_email_domains: string;
  groups_claim: string;
  group_mapping: { claim_value: string; group_id: string }[];
  default_role: SignInRole;
  enabled: boolean;
}

export const draftOf = (stored: IdentityProvider | undefined): IdentityProviderDraft => ({
  issuer: stored?.issuer ?? "",
  client_id: stored?.client_id ?? "",
  client_secret: "",
  allowed_email_domains: stored?.allowed_email_domains.join(", ") ?? "",
  groups_claim: stored?.groups_claim ?? "groups",
  group_mapping: stored?.group_mapping.map((row) => ({ ...row })) ?? [],
  default_role: stored?.default_role ?? "user",
  enabled: stored?.enabled ?? true,
});

/** Domains typed as a list: commas, spaces or new lines between them, an `@` before one tolerated. */
export const parseEmailDomains = (text: string): string[] =>
  text
    .split(/[\s,;]+/)
    .map((domain) => domain.trim().replace(/^@/, "").toLowerCase())
    .filter(Boolean);

/**
 * The PUT body: an empty secret is left out, which keeps the stored one (it is write-only); rows of
 * the group mapping left wholly empty are dropped, half-filled ones go to the API, which names them.
 */
export function identityProviderBody(draft: IdentityProviderDraft): IdentityProviderBody {
  const secret = draft.client_secret.trim();
  return {
    issuer: draft.issuer.trim(),
    client_id: draft.client_id.trim(),
    ...(secret ? { client_secret: secret } : {}),
    allowed_email_domains: parseEmailDomains(draft.allowed_email_domains),
    groups_claim: draft.groups_claim.trim(),
    group_mapping: draft.group_mapping
      .map((row) => ({ claim_value: row.claim_value.trim(), group_id: row.group_id }))
      .filter((row) => row.claim_value !== "" || row.group_id !== ""),
    default_role: draft.default_role,
    enabled: draft.enabled,
  };
}

/** What to register at the provider as the client's redirect URI. */
export const callbackUrl = (origin: string): string => `${origin}/api/auth/oidc/callback`;
