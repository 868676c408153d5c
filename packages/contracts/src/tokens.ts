import { z } from "zod";
import { Id, ResourceName, Timestamp } from "./common";

/** Prefix of every API token: lets secret scanners and humans recognise a leaked one. */
export const TOKEN_PREFIX = "agn_";
/** The random part of a token: 40 base62 characters (about 238 bits). */
export const TOKEN_SECRET_LENGTH = 40;

/** Cheap shape check at the edge, before anything is asked of the control-plane. */
export const looksLikeToken = (token: string): boolean =>
  token.startsWith(TOKEN_PREFIX) && token.length === TOKEN_PREFIX.length + TOKEN_SECRET_LENGTH;

/** NetBird's personal access token; the secret itself is shown once, in `PersonalAccessTokenGenerated`. */
export const PersonalAccessToken = z.object({
  id: Id,
  name: z.string(),
  expiration_date: Timestamp,
  created_by: Id,
  created_at: Timestamp,
  last_used: Timestamp.optional(),
});
export type PersonalAccessToken = z.infer<typeof PersonalAccessToken>;

export const CreateTokenBody = z.object({
  name: ResourceName,
  /** Days until the token expires, as NetBird: 1 to 365. */
  expires_in: z.number().int().min(1).max(365),
});
export type CreateTokenBody = z.infer<typeof CreateTokenBody>;

export const PersonalAccessTokenGenerated = z.object({
  plain_token: z.string().startsWith(TOKEN_PREFIX),
  personal_access_token: PersonalAccessToken,
});
export type PersonalAccessTokenGenerated = z.infer<typeof PersonalAccessTokenGenerated>;
