import { z } from "zod";
import { Id, RequestOrigin, Role, Timestamp } from "./common";

/**
 * The audit trail (docs/API.md "Audit trail"): one entry per change made through the API and per
 * refused attempt, chained per account (packages/audit). Not in the spec.
 */

/**
 * How a change ended: `succeeded`; `refused` (the caller may not make it: 401, 403); `failed`
 * (anything else that stopped it: a body that does not parse, a conflict, not found, or a failure
 * midway, `after` showing what was stored); `interrupted` (the process making it stopped before its
 * entry was written: the entry was written on recovery, `after` as the target was found then).
 */
export const AuditOutcome = z.enum(["succeeded", "failed", "refused", "interrupted"]);
export type AuditOutcome = z.infer<typeof AuditOutcome>;

/** Who made a change: the user, the credential they used, and where from. */
export const AuditActor = z.object({
  user_id: Id.optional(),
  email: z.string().optional(),
  role: Role.optional(),
  /** The API token the request carried. */
  token_id: Id.optional(),
  /** The browser session it came in, when signed in with the identity provider. */
  session_id: Id.optional(),
  ...RequestOrigin.shape,
});
export type AuditActor = z.infer<typeof AuditActor>;

/** What changes are made to, as entries name it. */
export const AuditTargetType = z.enum([
  "account",
  "user",
  "group",
  "token",
  "settings",
  "budget_rule",
  "provider",
  "policy",
  "guardrail",
  "mcp_server",
  "mcp_user_credential",
  "notification_settings",
  "audit_settings",
  "agent_credential",
  "identity_provider",
  "session",
]);
export type AuditTargetType = z.infer<typeof AuditTargetType>;

/** The collections of change endpoints' subjects (`agn.ctl.<collection>.<verb>`) and what they change. */
const TARGET_OF_COLLECTION: Record<string, AuditTargetType> = {
  accounts: "account",
  users: "user",
  groups: "group",
  tokens: "token",
  settings: "settings",
  budget_rules: "budget_rule",
  providers: "provider",
  policies: "policy",
  guardrails: "guardrail",
  mcp_servers: "mcp_server",
  "mcp_servers.my_credential": "mcp_user_credential",
  notifications: "notification_settings",
  "audit.settings": "audit_settings",
  agent_credentials: "agent_credential",
  identity_provider: "identity_provider",
  sessions: "session",
};

/** An endpoint's action in the trail: `policies.update` for `agn.ctl.policies.update`. */
export const auditActionOf = (endpoint: { subject: string }): string =>
  endpoint.subject.replace(/^agn\.ctl\./, "");

/** What the change an action names is made to; undefined for an action that changes nothing (a discovery, a read). */
export const auditTargetTypeOf = (action: string): AuditTargetType | undefined =>
  TARGET_OF_COLLECTION[action.slice(0, action.lastIndexOf("."))];

/** What a change was made to: its kind (`policy`, `provider`, ...) and id, when it has one. */
export const AuditTarget = z.object({ type: AuditTargetType, id: z.string().max(256).optional() });
export type AuditTarget = z.infer<typeof AuditTarget>;

/** An entry's place in its account's chain: 1, 2, 3, ... (from a path: `/api/audit/42`). */
export const AuditSeq = z.coerce.number().int().min(1);

export const AuditEntry = z.object({
  id: Id,
  account_id: Id,
  /** The entry's place in its account's chain: 1, 2, 3, ... */
  seq: z.number().int().min(1),
  at: Timestamp,
  actor: AuditActor,
  /** `<collection>.<verb>`: `policies.update`, `tokens.create`, ... */
  action: z.string(),
  target: AuditTarget,
  outcome: AuditOutcome,
  /** The HTTP status a failed or refused attempt was answered with. */
  status: z.number().int().optional(),
  /** The error's code when it was not a success (`policy.name_taken`, `auth.forbidden`, ...). */
  error_code: z.string().optional(),
  /** The target as stored before and after (secrets shown only as set, kept or changed); absent where it did not exist. */
  before: z.unknown().optional(),
  after: z.unknown().optional(),
  /** SHA-256 (hex) of the account's previous entry, and of this one (packages/audit). */
  prev_hash: z.string(),
  hash: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

/** The most entries one page of the list returns. */
export const MAX_AUDIT_PAGE = 1_000;

/** Filters of the list and the export; newest first, paged by `before_seq`. */
export const AuditQuery = z.object({
  /** A user id or an email. */
  actor: z.string().max(320).optional(),
  /** An action (`policies.update`) or every action on a collection (`policies`). */
  action: z.string().max(128).optional(),
  target_type: AuditTargetType.optional(),
  target_id: z.string().max(128).optional(),
  outcome: AuditOutcome.optional(),
  /** From this time on (included) and before that one (excluded). */
  from: Timestamp.optional(),
  to: Timestamp.optional(),
  /** Entries before this `seq` (the `next_before_seq` of the page before). */
  before_seq: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_AUDIT_PAGE).default(100),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

export const AuditPage = z.object({
  entries: z.array(AuditEntry),
  /** Where the next page starts; absent on the last. */
  next_before_seq: z.number().int().optional(),
});
export type AuditPage = z.infer<typeof AuditPage>;

/** Whether the account's chain holds, and if not, its first broken link. */
export const AuditVerification = z.object({
  intact: z.boolean(),
  /** Entries that verified. */
  checked: z.number().int(),
  /** The oldest entry kept (retention drops older ones) and the newest. */
  first_seq: z.number().int().optional(),
  last_seq: z.number().int().optional(),
  broken: z
    .object({
      seq: z.number().int(),
      id: z.string(),
      reason: z.enum(["hash_mismatch", "prev_hash_mismatch", "seq_gap"]),
    })
    .optional(),
});
export type AuditVerification = z.infer<typeof AuditVerification>;

/** A change the api-gateway stopped before it reached the control-plane (a role that may not, a body that does not parse). */
export const AuditRefusal = z.object({
  action: z.string().max(128),
  target: AuditTarget,
  status: z.number().int(),
  error_code: z.string().max(128),
});
export type AuditRefusal = z.infer<typeof AuditRefusal>;

/** How long entries are kept by default, and the bounds an owner may set. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;
export const MIN_AUDIT_RETENTION_DAYS = 30;
export const MAX_AUDIT_RETENTION_DAYS = 3_650;

/**
 * The account's audit settings: entries older than `retention_days` are dropped (the newest entry
 * always stays, so the chain goes on from it).
 */
export const AuditSettings = z.object({
  retention_days: z
    .number()
    .int()
    .min(MIN_AUDIT_RETENTION_DAYS, `must be at least ${MIN_AUDIT_RETENTION_DAYS} (days)`)
    .max(MAX_AUDIT_RETENTION_DAYS, `must be at most ${MAX_AUDIT_RETENTION_DAYS} (days)`),
});
export type AuditSettings = z.infer<typeof AuditSettings>;
