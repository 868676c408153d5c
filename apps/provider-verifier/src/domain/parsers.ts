import type { ListingShape } from "@agentnet/contracts";
import { z } from "zod";

/** One model a vendor listed: its id, a display label if the vendor gave one, the id to price by. */
export interface ListedModel {
  id: string;
  label?: string;
  /** Azure lists deployments: the deployment id is what callers send, `model` is what is billed. */
  priceAs?: string;
}

export interface ListingPage {
  models: ListedModel[];
  /** Query parameters that fetch the next page, when the vendor says there is one. */
  next?: Record<string, string>;
}

// Schemas are loose (zod objects strip unknown keys rather than refusing them): vendors add
// fields all the time, and only the ones read here matter.
const Id = z.string().min(1);

const OpenAiData = z.object({ data: z.array(z.object({ id: Id })) });

const AnthropicData = z.object({
  data: z.array(z.object({ id: Id, display_name: z.string().optional() })),
  has_more: z.boolean().optional(),
  last_id: z.string().nullish(),
});

const AzureData = z.object({
  data: z.array(z.object({ id: Id, model: z.string().optional() })),
});

const VertexPublisherModels = z.object({
  // An empty garden answers `{}`.
  publisherModels: z.array(z.object({ name: Id })).optional(),
  nextPageToken: z.string().optional(),
});

const GeminiModels = z.object({
  // A key that sees no model answers `{}`.
  models: z.array(z.object({ name: Id, displayName: z.string().nullish() })).optional(),
  nextPageToken: z.string().optional(),
});

const MistralData = z.object({
  data: z.array(z.object({ id: Id, name: z.string().nullish() })),
});

/**
 * Bedrock's control plane: `GET /foundation-models` answers `modelSummaries` (no pages), `GET
 * /inference-profiles` answers `inferenceProfileSummaries` and a `nextToken` while there are more.
 * A foundation model that Bedrock serves only through inference profiles
 * (`inferenceTypesSupported` without `ON_DEMAND`) is not a model id a request can name.
 */
const BedrockModels = z
  .object({
    modelSummaries: z
      .array(
        z.object({
          modelId: Id,
          modelName: z.string().nullish(),
          inferenceTypesSupported: z.array(z.string()).nullish(),
        }),
      )
      .optional(),
    inferenceProfileSummaries: z
      .array(z.object({ inferenceProfileId: Id, inferenceProfileName: z.string().nullish() }))
      .optional(),
    nextToken: z.string().nullish(),
  })
  .refine((body) => body.modelSummaries !== undefined || body.inferenceProfileSummaries !== undefined, {
    message: "neither modelSummaries nor inferenceProfileSummaries",
  });

/** `publishers/google/models/gemini-2.0-flash-001` → `gemini-2.0-flash-001`. */
const vertexModelId = (name: string): string => name.slice(name.lastIndexOf("/") + 1) || name;

export type ParseResult = { ok: true; page: ListingPage } | { ok: false; why: string };

const describe = (error: z.ZodError): string => {
  const issue = error.issues[0];
  if (issue === undefined) return "unexpected shape";
  return `${issue.path.join(".") || "(root)"}: ${issue.message}`;
};

/** Reads one page of a vendor's model listing, by the shape the catalog entry declares. */
export function parseListing(shape: ListingShape, body: unknown): ParseResult {
  switch (shape) {
    case "openai_data": {
      const parsed = OpenAiData.safeParse(body);
      if (!parsed.success) return { ok: false, why: describe(parsed.error) };
      return { ok: true, page: { models: parsed.data.data.map(({ id }) => ({ id })) } };
    }
    case "anthropic_data": {
      const parsed = AnthropicData.safeParse(body);
      if (!parsed.success) return { ok: false, why: describe(parsed.error) };
      const { data, has_more, last_id } = parsed.data;
      const models = data.map(({ id, display_name }) => ({
        id,
        ...(display_name ? { label: display_name } : {}),
      }));
      const next = has_more === true && last_id ? { after_id: last_id } : undefined;
      return { ok: true, page: { models, ...(next ? { next } : {}) } };
    }
    case "azure_data": {
      const parsed = AzureData.safeParse(body);
      if (!parsed.success) return { ok: false, why: describe(parsed.error) };
      const models = parsed.data.data.map(({ id, model }) => ({
        id,
        ...(model ? { priceAs: model, label: `${id} (${model})` } : {}),
      }));
      return { ok: true, page: { models } };
    }
    case "vertex_publisher_models": {
      const parsed = VertexPublisherModels.safeParse(body);
      if (!parsed.success) return { ok: false, why: describe(parsed.error) };
      const models = (parsed.data.publisherModels ?? []).map(({ name }) => ({ id: vertexModelId(name) }));
      const token = parsed.data.nextPageToken;
      return { ok: true, page: { models, ...(token ? { next: { pageToken: token } } : {}) } };
    }
    case "gemini_models": {
      const parsed = GeminiModels.safeParse(body);
      if (!parsed.success) return { ok: false, why: describe(parsed.error) };
      const models = (parsed.data.models ?? []).map(({ name, displayName }) => ({
        id: vertexModelId(name),
        ...(displayName ? { label: displayName } : {}),
      }));
      const token = parsed.data.nextPageToken;
      return { ok: true, page: { models, ...(token ? { next: { pageToken: token } } : {}) } };
    }
    case "mistral_data": {
      const parsed = MistralData.safeParse(body);
      if (!parsed.success) return { ok: false, why: describe(parsed.error) };
      const models = parsed.data.data.map(({ id, name }) => ({ id, ...(name ? { label: name } : {}) }));
      return { ok: true, page: { models } };
    }
    case "bedrock_models": {
      const parsed = BedrockModels.safeParse(body);
      if (!parsed.success) return { ok: false, why: describe(parsed.error) };
      const { modelSummaries = [], inferenceProfileSummaries = [], nextToken } = parsed.data;
      const models = [
        ...modelSummaries
          .filter((m) => !m.inferenceTypesSupported || m.inferenceTypesSupported.includes("ON_DEMAND"))
          .map(({ modelId, modelName }) => ({ id: modelId, ...(modelName ? { label: modelName } : {}) })),
        ...inferenceProfileSummaries.map(({ inferenceProfileId, inferenceProfileName }) => ({
          id: inferenceProfileId,
          ...(inferenceProfileName ? { label: inferenceProfileName } : {}),
        })),
      ];
      return { ok: true, page: { models, ...(nextToken ? { next: { nextToken } } : {}) } };
    }
    case "cloudflare_gateway":
      // Cloudflare's account API lists gateways, not models, and its host is never contacted.
      return { ok: false, why: "a control-plane listing is never requested" };
  }
}
