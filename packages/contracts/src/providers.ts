import { z } from "zod";
import { ApiKey, CatalogProviderId, HttpHeaderName, RatePer1k, UpstreamUrl } from "./catalog";
import { Id, ModelName, ResourceName, ResourceTimestamps, Timestamp } from "./common";
import {
  MAX_ANTHROPIC_BETA_LENGTH,
  MAX_ANTHROPIC_BETAS,
  MAX_EXTRA_VALUES,
  MAX_HEADER_VALUE_LENGTH,
  MAX_MODELS,
} from "./sizes";

// Replies read rows as stored: one stored before rates were bounded must still read.
const StoredRate = z.number().min(0);

/**
 * A priced model row. The three cache rates are optional: omitted inherits the catalog
 * default for the model, and 0 bills those tokens at input_per_1k.
 */
export const ProviderModel = z.object({
  id: z.string().trim().min(1),
  input_per_1k: StoredRate,
  output_per_1k: StoredRate,
  /** OpenAI shape: cached prompt tokens, a subset of input tokens. */
  cached_input_per_1k: StoredRate.optional(),
  /** Anthropic shape: cache-read tokens, additive to input tokens. */
  cache_read_per_1k: StoredRate.optional(),
  /** Anthropic shape: cache-creation tokens, additive to input tokens. */
  cache_creation_per_1k: StoredRate.optional(),
});
export type ProviderModel = z.infer<typeof ProviderModel>;

/** A model row as a body writes it: a bounded model name and every rate at most MAX_RATE_PER_1K. */
export const ProviderModelBody = z.object({
  id: ModelName,
  input_per_1k: RatePer1k,
  output_per_1k: RatePer1k,
  cached_input_per_1k: RatePer1k.optional(),
  cache_read_per_1k: RatePer1k.optional(),
  cache_creation_per_1k: RatePer1k.optional(),
});
export type ProviderModelBody = z.infer<typeof ProviderModelBody>;

// Two rows for one model would make its price ambiguous.
const ProviderModels = z
  .array(ProviderModelBody)
  .max(MAX_MODELS, `at most ${MAX_MODELS} models`)
  .superRefine((models, ctx) => {
    const seen = new Set<string>();
    models.forEach((model, index) => {
      if (seen.has(model.id)) {
        ctx.addIssue({ code: "custom", path: [index, "id"], message: `duplicate model id ${model.id}` });
      }
      seen.add(model.id);
    });
  });

// Header values are stamped onto upstream requests: a line break would inject a header.
const HeaderValue = z
  .string()
  .max(MAX_HEADER_VALUE_LENGTH, `must be at most ${MAX_HEADER_VALUE_LENGTH} characters`)
  .regex(/^[^\r\n\0]*$/, "must not contain line breaks or NUL");

/** Values for catalog-declared extra headers, keyed by header name. */
export const ExtraValues = z
  .record(HttpHeaderName, HeaderValue)
  .refine((values) => Object.keys(values).length <= MAX_EXTRA_VALUES, {
    message: `at most ${MAX_EXTRA_VALUES} extra headers`,
  });
export type ExtraValues = z.infer<typeof ExtraValues>;

/**
 * The `anthropic-beta` values a provider's upstream accepts for Claude (docs/API.md, "Claude betas
 * per upstream"). Each is a header token, so it can neither split the header nor inject another.
 */
export const AnthropicBetas = z
  .array(
    z
      .string()
      .regex(
        new RegExp(`^[a-z0-9_-]{1,${MAX_ANTHROPIC_BETA_LENGTH}}$`),
        `must be 1 to ${MAX_ANTHROPIC_BETA_LENGTH} of a-z, 0-9, - and _`,
      ),
  )
  .max(MAX_ANTHROPIC_BETAS, `at most ${MAX_ANTHROPIC_BETAS} betas`);
export type AnthropicBetas = z.infer<typeof AnthropicBetas>;

/** A wire header name for identity stamping; empty disables stamping for that dimension. */
const IdentityHeaderName = z.union([z.literal(""), HttpHeaderName]);

/**
 * What a provider's key is (packages/vendor-auth): sent as it is (`api_key`; `access_token`, a bare
 * Vertex OAuth token that expires within an hour), or exchanged by the proxy for tokens it mints
 * and refreshes (`service_account`, a Google service-account key; `entra_client_secret`, Microsoft
 * Entra ID client credentials for Azure OpenAI; `aws_access_key`, AWS IAM access keys for Amazon
 * Bedrock, with which the proxy signs each request with SigV4).
 */
export const CredentialKind = z.enum([
  "api_key",
  "access_token",
  "service_account",
  "entra_client_secret",
  "aws_access_key",
]);
export type CredentialKind = z.infer<typeof CredentialKind>;

/**
 * A provider some gateway proxy tries last after it failed again and again: until when (the
 * latest over proxies) and its last error there.
 */
export const ProviderCooldown = z.object({ until: Timestamp, last_error: z.string() });
export type ProviderCooldown = z.infer<typeof ProviderCooldown>;

/** Response shape. There is deliberately no api_key: parsing a stored record strips it. */
export const Provider = z.object({
  id: Id,
  provider_id: CatalogProviderId,
  name: z.string(),
  upstream_url: z.string(),
  models: z.array(ProviderModel),
  extra_values: z.record(z.string(), z.string()),
  identity_header_user_id: z.string(),
  identity_header_groups: z.string(),
  enabled: z.boolean(),
  skip_tls_verification: z.boolean(),
  metadata_disabled: z.boolean(),
  /** Optional: providers stored before kinds were recorded have none. */
  credential_kind: CredentialKind.optional(),
  /** Absent: the catalog entry's list applies (every beta passes when it has none). */
  anthropic_betas: z.array(z.string()).optional(),
  /** Present only on reads while a proxy tries the provider last (docs/API.md, "Provider cooldown"). */
  cooldown: ProviderCooldown.optional(),
  ...ResourceTimestamps.shape,
});
export type Provider = z.infer<typeof Provider>;

export const CreateProviderBody = z.object({
  provider_id: CatalogProviderId,
  name: ResourceName,
  upstream_url: UpstreamUrl,
  api_key: ApiKey,
  /** Empty means every catalog model is allowed at catalog prices. */
  models: ProviderModels.default([]),
  extra_values: ExtraValues.default({}),
  identity_header_user_id: IdentityHeaderName.default(""),
  identity_header_groups: IdentityHeaderName.default(""),
  enabled: z.boolean().default(true),
  skip_tls_verification: z.boolean().default(false),
  /** false means user and authorising group metadata are injected. */
  metadata_disabled: z.boolean().default(false),
  /** Omitted or null: the catalog entry's list. */
  anthropic_betas: AnthropicBetas.nullable().optional(),
});
export type CreateProviderBody = z.infer<typeof CreateProviderBody>;

/**
 * PUT body. api_key omitted keeps the stored key. The other optional fields carry no defaults
 * here on purpose: omitted keeps the stored value, so a rename cannot silently re-enable a
 * provider, wipe its model rows, or flip skip_tls_verification back to false (which would fire
 * a vendor check).
 */
export const UpdateProviderBody = z.object({
  provider_id: CatalogProviderId,
  name: ResourceName,
  upstream_url: UpstreamUrl,
  api_key: ApiKey.optional(),
  models: ProviderModels.optional(),
  /** When sent, replaces the stored map. */
  extra_values: ExtraValues.optional(),
  identity_header_user_id: IdentityHeaderName.optional(),
  identity_header_groups: IdentityHeaderName.optional(),
  enabled: z.boolean().optional(),
  skip_tls_verification: z.boolean().optional(),
  metadata_disabled: z.boolean().optional(),
  /** When sent, replaces the stored list; null clears it back to the catalog entry's. */
  anthropic_betas: AnthropicBetas.nullable().optional(),
});
export type UpdateProviderBody = z.infer<typeof UpdateProviderBody>;

/** The stored extra_values after a write: the request map replaces, and "" drops a key. */
export const normaliseExtraValues = (values: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(values).filter(([, value]) => value !== ""));
