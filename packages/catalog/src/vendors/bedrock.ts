import type { CatalogEntry, CatalogEntryModel, LongContextRates } from "../types";
import { ANTHROPIC_MODELS } from "./anthropic";
import { BEDROCK_ANTHROPIC_BETAS } from "./anthropic-betas";
import { BEARER_TEMPLATE } from "./model";

/**
 * Claude on Amazon Bedrock, named as Bedrock names it. Ids and where each is offered come from
 * Anthropic's "Claude on Amazon Bedrock" page (platform.claude.com/docs/en/build-with-claude/
 * claude-on-amazon-bedrock, "API model IDs" table; checked on prices_checked_on): the foundation
 * model id (`anthropic.claude-sonnet-4-5-20250929-v1:0`; the 4.6 models are dateless,
 * `anthropic.claude-opus-4-6-v1`, `anthropic.claude-sonnet-4-6`), called in the endpoint's own
 * region, and the system cross-region inference profiles prefixed `us.`, `eu.` (the geography's
 * regions) and `global.` (every commercial region). The same table lists `jp.` and `apac.` profiles
 * for some models; a provider that uses one declares its model row. Opus 4.1 has a `us.` profile
 * only. Opus 4.7 and later are served on Bedrock's Messages-API endpoint, without an ARN-versioned
 * id, and are not listed here.
 *
 * Prices: Bedrock charges Anthropic's list prices (anthropic.ts: input, output, cache reads and
 * 5-minute cache writes, and the Sonnet 4/4.5 long-context tier) on the global profiles. From
 * Claude Sonnet 4.5 on (Sonnet 4.5, Haiku 4.5, Opus 4.5, Opus 4.6, Sonnet 4.6), the regional
 * endpoints, in-region ids and the `us.`/`eu.` profiles alike, carry a 10% premium on every rate
 * (the same page, "Global vs regional endpoints"; aws.amazon.com/bedrock/pricing lists the
 * regional rates). Sonnet 4 and Opus 4.1 cost the same everywhere. So each id is a model row of
 * its own at its own rates.
 *
 * The Anthropic ids (`claude-sonnet-4-5`, its dated id) are aliases of the global profile, or of
 * the `us.` one where there is none: the row a caller naming Anthropic's id is priced by.
 */
const REGIONAL_PREMIUM = 1.1;

type Reach = "global" | "us" | "eu" | "in-region";

const PREFIX: Record<Reach, string> = { global: "global.", us: "us.", eu: "eu.", "in-region": "" };
const LABEL: Record<Reach, string> = {
  global: "global",
  us: "US profile",
  eu: "EU profile",
  "in-region": "in-region",
};

/** A rate times the premium, cleaned of float noise (0.003 × 1.1 is 0.0033, not …04). */
const raised = (rate: number, factor: number): number => Number((rate * factor).toPrecision(12));

const raisedTier = (tier: LongContextRates, factor: number): LongContextRates => ({
  above_input_tokens: tier.above_input_tokens,
  input_per_1k: raised(tier.input_per_1k, factor),
  output_per_1k: raised(tier.output_per_1k, factor),
  ...(tier.cached_input_per_1k === undefined
    ? {}
    : { cached_input_per_1k: raised(tier.cached_input_per_1k, factor) }),
  ...(tier.cache_read_per_1k === undefined
    ? {}
    : { cache_read_per_1k: raised(tier.cache_read_per_1k, factor) }),
  ...(tier.cache_creation_per_1k === undefined
    ? {}
    : { cache_creation_per_1k: raised(tier.cache_creation_per_1k, factor) }),
});

/**
 * The rows of one Claude model on Bedrock: one per way in, at Anthropic's rates on the global
 * profile and, when `regionalPremium`, 10% above them elsewhere.
 */
const onBedrock = (
  anthropicId: string,
  bedrockId: string,
  reaches: readonly Reach[],
  regionalPremium: boolean,
): CatalogEntryModel[] => {
  const listed = ANTHROPIC_MODELS.find((m) => m.id === anthropicId);
  if (!listed) throw new Error(`no Anthropic model ${anthropicId}`);
  const { aliases = [], ...rates } = listed;
  const aliased: Reach = reaches.includes("global") ? "global" : "us";
  return reaches.map((reach) => {
    const factor = regionalPremium && reach !== "global" ? REGIONAL_PREMIUM : 1;
    return {
      ...rates,
      id: `${PREFIX[reach]}${bedrockId}`,
      label: `${listed.label} (${LABEL[reach]})`,
      input_per_1k: raised(rates.input_per_1k, factor),
      output_per_1k: raised(rates.output_per_1k, factor),
      cached_input_per_1k: raised(rates.cached_input_per_1k, factor),
      cache_read_per_1k: raised(rates.cache_read_per_1k, factor),
      cache_creation_per_1k: raised(rates.cache_creation_per_1k, factor),
      ...(rates.long_context ? { long_context: raisedTier(rates.long_context, factor) } : {}),
      ...(reach === aliased ? { aliases: [anthropicId, ...aliases] } : {}),
    };
  });
};

const EVERYWHERE: readonly Reach[] = ["global", "us", "eu", "in-region"];

export const BEDROCK_CLAUDE_MODELS: CatalogEntryModel[] = [
  ...onBedrock("claude-opus-4-6", "anthropic.claude-opus-4-6-v1", EVERYWHERE, true),
  ...onBedrock("claude-sonnet-4-6", "anthropic.claude-sonnet-4-6", EVERYWHERE, true),
  ...onBedrock("claude-opus-4-5", "anthropic.claude-opus-4-5-20251101-v1:0", EVERYWHERE, true),
  ...onBedrock("claude-sonnet-4-5", "anthropic.claude-sonnet-4-5-20250929-v1:0", EVERYWHERE, true),
  ...onBedrock("claude-haiku-4-5", "anthropic.claude-haiku-4-5-20251001-v1:0", EVERYWHERE, true),
  ...onBedrock("claude-sonnet-4", "anthropic.claude-sonnet-4-20250514-v1:0", EVERYWHERE, false),
  ...onBedrock("claude-opus-4-1", "anthropic.claude-opus-4-1-20250805-v1:0", ["us", "in-region"], false),
];

export const bedrock: CatalogEntry = {
  prices_checked_on: "2026-11-29",
  prices_source: "https://aws.amazon.com/bedrock/pricing/",
  id: "bedrock_api",
  name: "Amazon Bedrock",
  description:
    "Claude on Amazon Bedrock, addressed by region: upstream_url is https://bedrock-runtime.{region}.amazonaws.com.",
  default_host: "bedrock-runtime.{region}.amazonaws.com",
  // A Bedrock API key (what AWS_BEARER_TOKEN_BEDROCK holds) is a bearer token; IAM access keys
  // (JSON) are not sent at all: the proxy signs each request with them (packages/vendor-auth).
  auth_header_name: "Authorization",
  auth_header_template: BEARER_TEMPLATE,
  default_content_type: "application/json",
  brand_color: "#ff9900",
  kind: "llm",
  api_flavor: "bedrock",
  anthropic_betas: BEDROCK_ANTHROPIC_BETAS,
  extra_headers: [
    {
      name: "X-Amzn-Bedrock-GuardrailIdentifier",
      description: "An Amazon Bedrock guardrail to apply to every request (its id or ARN).",
      required: false,
    },
    {
      name: "X-Amzn-Bedrock-GuardrailVersion",
      description: "The guardrail's version, with X-Amzn-Bedrock-GuardrailIdentifier.",
      required: false,
    },
  ],
  identity_injection: {
    // Claude's request body on Bedrock has no metadata field: headers only.
    header_pair: { customizable: true, end_user_id_header: "", tags_header: "" },
  },
  pricing_surfaces: ["input", "output", "cache_read", "cache_creation"],
  models: BEDROCK_CLAUDE_MODELS,
  // On the control plane, bedrock.{region}.amazonaws.com for an AWS runtime host (the verifier
  // derives it); a Bedrock API key and SigV4 (service bedrock) both reach it.
  listing: {
    path: "/foundation-models",
    more_paths: ["/inference-profiles?maxResults=1000"],
    shape: "bedrock_models",
  },
};
