import { z } from "zod";

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

/** Whether `text` holds a control character (C0, DEL, C1) other than those in `allowed`. */
const hasControlCharacter = (text: string, allowed = ""): boolean => {
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if ((code <= 0x1f || (code >= 0x7f && code <= 0x9f)) && !allowed.includes(character)) return true;
  }
  return false;
};

/** A name of a resource (group, provider, policy, token, ...): 1–200 characters, no control characters. */
export const ResourceName = z
  .string()
  .trim()
  .min(1, "name must not be empty")
  .max(200, "name must be at most 200 characters")
  .refine((name) => !hasControlCharacter(name), "name must not contain control characters");

/** Free text a person writes about a resource: up to 2,000 characters, line breaks and tabs allowed. */
export const Description = z
  .string()
  .max(2_000, "description must be at most 2000 characters")
  .refine((text) => !hasControlCharacter(text, "\t\n\r"), "description must not contain control characters");
