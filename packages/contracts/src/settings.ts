import { z } from "zod";
import { Timestamp } from "./common";
import { MAX_RETENTION_DAYS } from "./sizes";

const MAX_HOSTNAME_LENGTH = 253;
// RFC 1123 labels: 1-63 of a-z0-9 and inner hyphens, dot-separated, no trailing dot.
const HOSTNAME_PATTERN =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * A DNS hostname, compared and stored lowercase: hostnames are case-insensitive, and the
 * "equals the assigned value" rule on PUT must not fail on case alone.
 */
export const Hostname = z
  .string()
  .trim()
  .toLowerCase()
  .min(1, "hostname must not be empty")
  .max(MAX_HOSTNAME_LENGTH)
  .regex(HOSTNAME_PATTERN, "must be a valid DNS hostname (labels of a-z, 0-9 and inner hyphens)");
export type Hostname = z.infer<typeof Hostname>;

/**
 * The per-account gateway settings. `endpoint` and `proxy_address` are empty strings and the
 * timestamps are absent when the account has no settings record yet: GET then answers the
 * defaults rather than a 404, and there is no stored record to have been created or updated.
 */
export const Settings = z.object({
  endpoint: z.string(),
  proxy_address: z.string(),
  dedicated: z.boolean(),
  enable_log_collection: z.boolean(),
  enable_prompt_collection: z.boolean(),
  redact_pii: z.boolean(),
  /** 0 or less keeps rows indefinitely. */
  access_log_retention_days: z.number().int(),
  created_at: Timestamp.optional(),
  updated_at: Timestamp.optional(),
});
export type Settings = z.infer<typeof Settings>;

export const DEFAULT_SETTINGS = {
  enable_log_collection: true,
  enable_prompt_collection: false,
  redact_pii: false,
  access_log_retention_days: 30,
} as const;

/**
 * The GET answer when no record exists: defaults, with nothing allocated yet. `dedicated` is
 * false because no endpoint has been claimed.
 */
export const unconfiguredSettings = (): Settings => ({
  endpoint: "",
  proxy_address: "",
  dedicated: false,
  ...DEFAULT_SETTINGS,
});

/** Days a body may set: 0 or less keeps rows forever, so a century is far beyond any real need. */
const RetentionDays = z
  .number()
  .int()
  .max(MAX_RETENTION_DAYS, `must be at most ${MAX_RETENTION_DAYS} days (0 or less keeps rows forever)`);

// An empty string counts as "not given": GET answers "" for both before bootstrap, so a
// client that echoes that body back with one field filled in must not trip the hostname check.
const OptionalHostname = z
  .string()
  .trim()
  .transform((v) => (v === "" ? undefined : v))
  .pipe(Hostname.optional())
  .optional();

/**
 * POST body. The exactly-one-of proxy_address/endpoint rule is deliberately not in here: a
 * body breaking it is well-formed but refused (422), while this schema's failures are 400s.
 * The domain applies it with `endpointChoiceError`.
 */
export const CreateSettingsBody = z.object({
  /** Cluster address under which the server allocates a labeled endpoint. */
  proxy_address: OptionalHostname,
  /** Hostname claimed verbatim as a dedicated endpoint. */
  endpoint: OptionalHostname,
  enable_log_collection: z.boolean().default(DEFAULT_SETTINGS.enable_log_collection),
  enable_prompt_collection: z.boolean().default(DEFAULT_SETTINGS.enable_prompt_collection),
  redact_pii: z.boolean().default(DEFAULT_SETTINGS.redact_pii),
  access_log_retention_days: RetentionDays.default(DEFAULT_SETTINGS.access_log_retention_days),
});
export type CreateSettingsBody = z.infer<typeof CreateSettingsBody>;

/** Why a parsed POST body names the wrong number of endpoint sources, or null when it is fine. */
export const endpointChoiceError = (
  body: Pick<CreateSettingsBody, "proxy_address" | "endpoint">,
): string | null => {
  const hasProxy = body.proxy_address !== undefined;
  const hasEndpoint = body.endpoint !== undefined;
  if (hasProxy && hasEndpoint)
    return "proxy_address and endpoint are mutually exclusive; provide exactly one";
  if (!hasProxy && !hasEndpoint) return "provide exactly one of proxy_address or endpoint";
  return null;
};

// A dedicated endpoint's record may hold an empty proxy_address (and the reverse), and PUT
// must echo the assigned values, so the empty string is accepted here.
const AssignedHostname = z.union([z.literal(""), Hostname]);

/**
 * PUT body: replaces the mutable fields. endpoint and proxy_address are only compared with the
 * assigned values (a difference is a 422 decided by the domain).
 */
export const UpdateSettingsBody = z.object({
  endpoint: AssignedHostname,
  proxy_address: AssignedHostname,
  enable_log_collection: z.boolean(),
  enable_prompt_collection: z.boolean(),
  redact_pii: z.boolean(),
  access_log_retention_days: RetentionDays,
});
export type UpdateSettingsBody = z.infer<typeof UpdateSettingsBody>;
