import { z } from "zod";
import {
  MAX_DESCRIPTION_LENGTH,
  MAX_EMAIL_LENGTH,
  MAX_ID_LIST,
  MAX_MODEL_LENGTH,
  MAX_NAME_LENGTH,
} from "./sizes";
import { displayText } from "./text";

/** Opaque resource id. */
export const Id = z.string().min(1).max(128);
export type Id = z.infer<typeof Id>;

/** RFC 3339 timestamp with an explicit offset (`Z` or `±hh:mm`). */
export const Timestamp = z.iso.datetime({ offset: true });
export type Timestamp = z.infer<typeof Timestamp>;

/** Fields every stored resource returns and no request may set. */
export const ResourceTimestamps = z.object({ created_at: Timestamp, updated_at: Timestamp });

export const Role = z.enum(["owner", "admin", "auditor", "user"]);
export type Role = z.infer<typeof Role>;

/** Roles holding the account-wide grant: they read every caller's logs, sessions and usage. */
export const ACCOUNT_WIDE_ROLES: readonly Role[] = ["owner", "admin", "auditor"];
/** Roles that may change configuration. */
export const WRITER_ROLES: readonly Role[] = ["owner", "admin"];

export const hasAccountWideGrant = (role: Role): boolean => ACCOUNT_WIDE_ROLES.includes(role);
export const canWriteConfig = (role: Role): boolean => WRITER_ROLES.includes(role);

/** Where a request came from, as the api-gateway saw it (the client's address behind trusted proxies). */
export const RequestOrigin = z.object({
  address: z.string().max(64).optional(),
  user_agent: z.string().max(512).optional(),
});
export type RequestOrigin = z.infer<typeof RequestOrigin>;

/**
 * The authenticated caller, resolved from an API token. Carried on every control-plane
 * request so each handler scopes by `account_id` and decides by `role`.
 */
export const Caller = z.object({
  account_id: Id,
  user_id: Id,
  role: Role,
  group_ids: z.array(Id),
  email: z.string(),
  name: z.string(),
  /** The API token the caller authenticated with (absent for callers resolved before it was added). */
  token_id: Id.optional(),
  /** The browser session the caller signed in with at their identity provider, instead of a token. */
  session_id: Id.optional(),
  /**
   * Set when the caller's token is a short-lived proxy token of this agent credential (`agentnet
   * token`): such a token may not mint longer-lived credentials (API tokens, agent credentials).
   */
  agent_credential_id: Id.optional(),
  /** Where the request came from, added by the api-gateway per request: audit entries show it. */
  origin: RequestOrigin.optional(),
});
export type Caller = z.infer<typeof Caller>;

/** `{}`: the reply of deletes and other calls with nothing to return. */
export const Empty = z.object({}).strict();
export type Empty = z.infer<typeof Empty>;

/** Query-string booleans arrive as text: only "true"/"false" (and 1/0) are accepted. */
export const QueryBoolean = z
  .union([z.boolean(), z.enum(["true", "false", "1", "0"])])
  .transform((v) => v === true || v === "true" || v === "1");

/** A query parameter that may repeat (`?group_id=a&group_id=b`) arrives as a string or a list. */
export const repeatable = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item)]).transform((v) => (Array.isArray(v) ? v : [v]) as z.output<T>[]);

/** A secret sealed with AES-256-GCM (see packages/sealing); `kid` names the key, never holds it. */
export const SealedSecret = z.object({
  v: z.literal(1),
  kid: z.string(),
  iv: z.string(),
  tag: z.string(),
  ct: z.string(),
});
export type SealedSecret = z.infer<typeof SealedSecret>;

/** A name of a resource (group, provider, policy, token, ...): 1–200 characters of display text. */
export const ResourceName = z
  .string()
  .trim()
  .min(1, "name must not be empty")
  .max(MAX_NAME_LENGTH, `name must be at most ${MAX_NAME_LENGTH} characters`)
  .superRefine(displayText("name"));

/** Free text a person writes about a resource: up to 2,000 characters, line breaks and tabs allowed. */
export const Description = z
  .string()
  .max(MAX_DESCRIPTION_LENGTH, `description must be at most ${MAX_DESCRIPTION_LENGTH} characters`)
  .superRefine(displayText("description", "\t\n\r"));

/** A model name as written in a provider's model list or an allowlist: 1–256 characters of display text. */
export const ModelName = z
  .string()
  .trim()
  .min(1, "model must not be empty")
  .max(MAX_MODEL_LENGTH, `model must be at most ${MAX_MODEL_LENGTH} characters`)
  .superRefine(displayText("model"));

/** A list of ids in a body: at most MAX_ID_LIST of them. */
export const IdList = z.array(Id).max(MAX_ID_LIST, `at most ${MAX_ID_LIST} ids`);

/** An email address in a body. */
export const Email = z.email().max(MAX_EMAIL_LENGTH, `email must be at most ${MAX_EMAIL_LENGTH} characters`);
