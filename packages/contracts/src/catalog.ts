import { z } from "zod";
import { Id } from "./common";
import { MAX_API_KEY_LENGTH, MAX_HEADER_NAME_LENGTH, MAX_RATE_PER_1K, MAX_URL_LENGTH } from "./sizes";
import { absoluteUrl } from "./urls";

/** Catalog ids are `<vendor>_api`, plus `custom` for any OpenAI-compatible upstream. */
export const CatalogProviderId = z
  .string()
  .regex(/^([a-z0-9]+_api|custom)$/, "must be <vendor>_api or custom");
export type CatalogProviderId = z.infer<typeof CatalogProviderId>;

/** An HTTP header field name (RFC 9110 token), so it can never smuggle a second header line. */
export const HttpHeaderName = z
  .string()
  .max(MAX_HEADER_NAME_LENGTH, `must be at most ${MAX_HEADER_NAME_LENGTH} characters`)
  .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, "must be a valid HTTP header name");

/**
 * An absolute http(s) URL. Localhost and IP hosts are allowed: custom upstreams live there. Stored
 * as written, not as the parser would print it: `https://api.openai.com` stays without the `/` the
 * parser adds, so reads echo what was sent and an update sending the same URL again is no change.
 */
export const UpstreamUrl = absoluteUrl(/^https?$/, "must be an absolute http:// or https:// URL").max(
  MAX_URL_LENGTH,
  `must be at most ${MAX_URL_LENGTH} characters`,
);

/** USD per 1000 tokens, from 0 to MAX_RATE_PER_1K. */
export const RatePer1k = z
  .number()
  .min(0)
  .max(MAX_RATE_PER_1K, `must be at most ${MAX_RATE_PER_1K} (USD per 1000 tokens)`);

/** An upstream credential, write-only. */
export const ApiKey = z
  .string()
  .min(1, "api_key must not be empty")
  .max(MAX_API_KEY_LENGTH, `api_key must be at most ${MAX_API_KEY_LENGTH} characters`);

const ModelRates = {
  input_per_1k: RatePer1k,
  output_per_1k: RatePer1k,
  cached_input_per_1k: RatePer1k,
  cache_read_per_1k: RatePer1k,
  cache_creation_per_1k: RatePer1k,
};

/**
 * Implementation field: the rates a vendor bills the whole request at once its prompt is above
 * `above_input_tokens` (Gemini 2.5 Pro and 3.x Pro over 200k, Claude Sonnet 4/4.5 over 200k input
 * incl. cache, GPT-5.4/5.5 over 272k). Optional: most models have one price at every size.
 */
export const LongContextRates = z.object({
  above_input_tokens: z.number().int().min(0),
  input_per_1k: RatePer1k,
  output_per_1k: RatePer1k,
  cached_input_per_1k: RatePer1k.optional(),
  cache_read_per_1k: RatePer1k.optional(),
  cache_creation_per_1k: RatePer1k.optional(),
});
export type LongContextRates = z.infer<typeof LongContextRates>;

export const CatalogModel = z.object({
  id: z.string().min(1),
  label: z.string(),
  ...ModelRates,
  context_window: z.number().int().min(0),
  long_context: LongContextRates.optional(),
});
export type CatalogModel = z.infer<typeof CatalogModel>;

/**
 * The wire protocol a provider speaks. Implementation field: the proxy picks its request
 * translation by it and agent-config hands it to SDKs.
 */
export const ApiFlavor = z.enum([
  "openai",
  "anthropic",
  "azure_openai",
  "vertex",
  "gemini",
  "mistral",
  "cloud_gateway",
  /** Amazon Bedrock runtime (`/model/{modelId}/invoke`, `/converse`): Claude on Bedrock. */
  "bedrock",
]);
export type ApiFlavor = z.infer<typeof ApiFlavor>;

/** How a vendor's model-listing response is laid out. */
export const ListingShape = z.enum([
  /** `{data: [{id}]}`: OpenAI and most compatible APIs. */
  "openai_data",
  /** `{data: [{id, display_name}], has_more, last_id}`: Anthropic. */
  "anthropic_data",
  /** `{data: [{id, model}]}`: Azure OpenAI deployments; `model` names the priced model behind a deployment. */
  "azure_data",
  /** `{publisherModels: [{name: "publishers/<p>/models/<id>"}]}`: Vertex model garden. */
  "vertex_publisher_models",
  /** `{models: [{name: "models/<id>", displayName}], nextPageToken}`: the Gemini API. */
  "gemini_models",
  /** `{data: [{id, name, capabilities}]}`: Mistral. */
  "mistral_data",
  /** Cloudflare's account API lists gateways, not models: resolved, never contacted. */
  "cloudflare_gateway",
  /**
   * `{modelSummaries: [{modelId, modelName, providerName}]}` from `GET /foundation-models` plus
   * `{inferenceProfileSummaries: [{inferenceProfileId, inferenceProfileName}], nextToken}` from
   * `GET /inference-profiles`: the Amazon Bedrock control plane.
   */
  "bedrock_models",
]);
export type ListingShape = z.infer<typeof ListingShape>;

/**
 * Implementation field: where the vendor lists the models a credential can use. The listing is
 * always requested over HTTPS at `path`, on the upstream's host unless `host` names a
 * control-plane listing host, which is only resolved, never contacted.
 */
export const CatalogListing = z.object({
  path: z.string().startsWith("/"),
  /**
   * Further listing paths on the same host whose models add to `path`'s, in the same shape (Bedrock
   * lists foundation models and inference profiles apart). Discovery reads them; verification only
   * `path`.
   */
  more_paths: z.array(z.string().startsWith("/")).optional(),
  host: z.string().min(1).optional(),
  shape: ListingShape,
});
export type CatalogListing = z.infer<typeof CatalogListing>;

export const CatalogExtraHeader = z.object({
  name: HttpHeaderName,
  description: z.string().optional(),
  /** The operator must supply a value in the provider's extra_values. */
  required: z.boolean().optional(),
  /** Sent when the provider's extra_values hold no value for the header. */
  default_value: z.string().optional(),
});
export type CatalogExtraHeader = z.infer<typeof CatalogExtraHeader>;

export const IdentityHeaderPair = z.object({
  customizable: z.boolean(),
  end_user_id_header: z.string(),
  tags_header: z.string(),
});
export type IdentityHeaderPair = z.infer<typeof IdentityHeaderPair>;

export const IdentityJsonMetadata = z.object({
  customizable: z.boolean(),
  header: z.string(),
  user_key: z.string(),
  groups_key: z.string(),
});
export type IdentityJsonMetadata = z.infer<typeof IdentityJsonMetadata>;

export const IdentityInjection = z.object({
  header_pair: IdentityHeaderPair.optional(),
  json_metadata: IdentityJsonMetadata.optional(),
});
export type IdentityInjection = z.infer<typeof IdentityInjection>;

/** The substitution token auth_header_template must carry. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the literal token is what templates carry.
export const API_KEY_TOKEN = "${API_KEY}";

export const CatalogProvider = z.object({
  id: CatalogProviderId,
  name: z.string().min(1),
  description: z.string(),
  default_host: z.string(),
  /** A header value template, e.g. `Bearer ${API_KEY}`. */
  auth_header_template: z.string().includes(API_KEY_TOKEN, { error: `must contain ${API_KEY_TOKEN}` }),
  /** Implementation field: the header auth_header_template fills; absent means Authorization. */
  auth_header_name: HttpHeaderName.optional(),
  default_content_type: z.string(),
  brand_color: z.string().regex(/^#[0-9a-fA-F]{6}$/, "must be a #rrggbb hex color"),
  kind: z.string(),
  extra_headers: z.array(CatalogExtraHeader),
  identity_injection: IdentityInjection,
  pricing_surfaces: z.array(z.string()),
  models: z.array(CatalogModel),
  api_flavor: ApiFlavor,
  /**
   * Implementation field: the `anthropic-beta` values the upstream accepts for Claude; absent when
   * it takes every one (Anthropic). Others are left out of the request (docs/API.md "Claude betas").
   */
  anthropic_betas: z.array(z.string()).optional(),
  /** null when the vendor has no listing endpoint: discovery answers 422, create stores unverified. */
  listing: CatalogListing.nullable(),
  /**
   * Implementation fields, optional (the spec's catalog provider lists neither; docs/API.md
   * "Catalog prices"): the day the model prices were last checked against the vendor's price
   * page (YYYY-MM-DD), and that page's URL. The dashboard flags prices older than 60 days.
   */
  prices_checked_on: z.iso.date().optional(),
  prices_source: z.url({ protocol: /^https$/ }).optional(),
});
export type CatalogProvider = z.infer<typeof CatalogProvider>;

/** Fills a catalog auth header template with a credential. */
export const renderAuthHeader = (template: string, apiKey: string): string =>
  template.split(API_KEY_TOKEN).join(apiKey);

/**
 * Model discovery. Either an unsaved credential (api_key with upstream_url) or a stored
 * provider (provider_id, whose upstream upstream_url may override). Breaking that is a
 * malformed request, so the rule lives here and yields 400 issues.
 */
export const DiscoverModelsBody = z
  .object({
    catalog_provider_id: CatalogProviderId,
    upstream_url: UpstreamUrl.optional(),
    api_key: ApiKey.optional(),
    provider_id: Id.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.api_key !== undefined && body.provider_id !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["provider_id"],
        message: "api_key and provider_id are mutually exclusive",
      });
      return;
    }
    if (body.api_key === undefined && body.provider_id === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["api_key"],
        message: "supply either api_key with upstream_url, or provider_id",
      });
      return;
    }
    if (body.api_key !== undefined && body.upstream_url === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["upstream_url"],
        message: "upstream_url is required with api_key",
      });
    }
  });
export type DiscoverModelsBody = z.infer<typeof DiscoverModelsBody>;

export const DiscoveredModel = z.object({
  id: z.string().min(1),
  label: z.string(),
  /** false when the shipped price table lacks the model: the operator must set its rates. */
  pricing_known: z.boolean(),
  ...ModelRates,
});
export type DiscoveredModel = z.infer<typeof DiscoveredModel>;

export const DiscoverModelsReply = z.object({ models: z.array(DiscoveredModel) });
export type DiscoverModelsReply = z.infer<typeof DiscoverModelsReply>;
