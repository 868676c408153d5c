import { z } from "zod";
import { Id, Role, Timestamp } from "./common";
import { MAX_URL_LENGTH } from "./sizes";
import { absoluteUrl } from "./urls";

/**
 * Sign-in with the account's OpenID Connect provider (docs/API.md "Sign-in with your identity
 * provider"): the authorization code flow with PKCE, users made on first sign-in, their groups
 * kept in step with a claim at every sign-in. Not in the spec.
 */

/** Roles a user made by sign-in may get: never owner, which only an owner hands out. */
export const SignInRole = Role.exclude(["owner"]);

const EmailDomain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
    "must be a domain such as example.com",
  );

export const IdentityProviderBody = z.object({
  /** The issuer, whose `/.well-known/openid-configuration` names the rest. */
  issuer: absoluteUrl(/^https?$/, "must be an absolute https:// URL (http:// only on loopback)")
    .max(MAX_URL_LENGTH)
    .refine((text) => {
      const url = URL.canParse(text) ? new URL(text) : undefined;
      return !url || url.protocol === "https:" || ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
    }, "must be https:// (http:// only on loopback)"),
  client_id: z.string().min(1).max(256),
  /** Write-only and sealed; a PUT without it keeps the stored one. */
  client_secret: z.string().min(1).max(1_024).optional(),
  /** Emails allowed to sign in (their part after `@`); empty: any the provider vouches for. */
  allowed_email_domains: z.array(EmailDomain).max(50).default([]),
  /** The ID token claim listing the user's groups at the provider. */
  groups_claim: z.string().min(1).max(128).default("groups"),
  /** Which agentnet group each value of that claim stands for; values not listed are ignored. */
  group_mapping: z
    .array(z.object({ claim_value: z.string().min(1).max(256), group_id: Id }))
    .max(500)
    .default([]),
  /** The role of a user made by their first sign-in. */
  default_role: SignInRole.default("user"),
  enabled: z.boolean().default(true),
});
export type IdentityProviderBody = z.infer<typeof IdentityProviderBody>;

export const IdentityProvider = IdentityProviderBody.omit({ client_secret: true }).extend({
  client_secret_set: z.boolean(),
  updated_at: Timestamp,
});
export type IdentityProvider = z.infer<typeof IdentityProvider>;

/** How the api-gateway starts a sign-in: which account (by id, or by the email's domain). */
export const SignInStart = z.object({
  account_id: Id.optional(),
  email: z.string().max(320).optional(),
  /** Where the provider sends the browser back (the api-gateway's callback, as the browser reaches it). */
  redirect_uri: z.string().max(MAX_URL_LENGTH),
});
export type SignInStart = z.infer<typeof SignInStart>;

export const SignInRedirect = z.object({ authorization_url: z.string(), state: z.string() });
export type SignInRedirect = z.infer<typeof SignInRedirect>;

/** The provider's answer as the browser brought it back, for the control-plane to check and redeem. */
export const SignInFinish = z.object({
  state: z.string().min(1).max(256),
  callback_url: z.string().max(8_192),
  address: z.string().max(64).optional(),
  user_agent: z.string().max(512).optional(),
});
export type SignInFinish = z.infer<typeof SignInFinish>;

/** A signed-in browser's session: its token goes in an HttpOnly cookie, never to scripts. */
export const SignInSession = z.object({
  session_token: z.string(),
  expires_at: Timestamp,
  account_id: Id,
  user_id: Id,
});
export type SignInSession = z.infer<typeof SignInSession>;

/**
 * `GET /api/auth/session`: who the caller is (by token or by session cookie), and with the cookie
 * the CSRF token every change made with it must carry in `x-csrf-token`.
 */
export const SessionInfo = z.object({
  user_id: Id,
  email: z.string(),
  name: z.string(),
  role: Role,
  account_id: Id,
  csrf_token: z.string().optional(),
});
export type SessionInfo = z.infer<typeof SessionInfo>;

/** `GET /api/auth/oidc/start`: whose sign-in to start, by email (its domain) or by account. */
export const SignInStartQuery = z.object({
  email: z.string().max(320).optional(),
  account_id: z.string().max(128).optional(),
});
export type SignInStartQuery = z.infer<typeof SignInStartQuery>;
