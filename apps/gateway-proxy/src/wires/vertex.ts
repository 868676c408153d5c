import {
  decodedSegment,
  type Operation,
  pathSegment,
  plainRoute,
  type Routes,
  type VendorTarget,
  type Wire,
} from "./wire";

/**
 * Vertex AI: Google's cloud serves Claude (publishers/anthropic), Gemini (publishers/google) and
 * OpenAI-format chat at its own paths. This module holds what the wires that reach Vertex share:
 * the routes its clients take to the proxy (`vertexRoutes`) and where a request goes at a Vertex
 * provider (`vertexTarget`).
 */

/** The Messages API version Vertex takes in the body of Claude requests. */
export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

const VERTEX =
  /^\/(v1|v1beta1)(?:\/projects\/[^/]+\/locations\/[^/]+)?\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;

export const GEMINI_OPERATIONS: Record<string, Operation> = {
  generateContent: "generate_content",
  streamGenerateContent: "generate_content",
  countTokens: "count_tokens",
};

/**
 * Claude on Vertex,
 * /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict|streamRawPredict,
 * and …/models/count-tokens:rawPredict (the model in the body); Gemini on Vertex,
 * /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:… (and under /v1beta1/, where
 * Google's SDK sends Vertex traffic, and without the project and location, as Vertex's express mode
 * with an API key sends it). The client's project and location are not used: the provider's
 * upstream_url names its own.
 */
export function vertexRoutes(anthropic: Wire, gemini: Wire): Routes {
  return {
    exact: {},
    match(path) {
      const vertex = VERTEX.exec(path);
      if (!vertex) return undefined;
      const [, version = "", publisher = "", model = "", method = ""] = vertex;
      const located = path.includes("/projects/") ? "/projects/{project}/locations/{location}" : "";
      const models = `/${version}${located}/publishers/${publisher}/models`;
      const label = `${models}/{model}:${method}`;
      if (publisher === "google") {
        const operation = GEMINI_OPERATIONS[method];
        if (!operation) return undefined;
        return {
          ingress: "vertex_gemini",
          wire: gemini,
          operation,
          label,
          pathModel: decodedSegment(model),
          streams: method === "streamGenerateContent",
        };
      }
      if (method !== "rawPredict" && method !== "streamRawPredict") return undefined;
      if (model === "count-tokens") {
        if (method !== "rawPredict") return undefined;
        return plainRoute("vertex_anthropic", anthropic, "count_tokens", `${models}/count-tokens:rawPredict`);
      }
      return {
        ingress: "vertex_anthropic",
        wire: anthropic,
        operation: "messages",
        label,
        pathModel: decodedSegment(model),
        streams: method === "streamRawPredict",
      };
    },
  };
}

/**
 * A Vertex model's method (`…/publishers/{publisher}/models/{model}:{method}`); Vertex serves
 * OpenAI-format requests elsewhere, at `…/endpoints/openapi/…` (`chat/completions`, `embeddings`),
 * not under `/v1` (`vertexOpenAiPath`).
 */
export const vertexModelPath = (publisher: "anthropic" | "google", model: string, method: string) =>
  `/publishers/${publisher}/models/${pathSegment(model)}:${method}`;
export const vertexOpenAiPath = (openAiPath: string) =>
  `/endpoints/openapi${openAiPath.replace(/^\/v1/, "")}`;

/**
 * `rest` after the project and location the Vertex upstream_url names
 * (`https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}`, with or
 * without a further path such as `/endpoints/openapi`); undefined when it names none.
 */
export function vertexTarget(upstreamUrl: string, rest: string, query: string): VendorTarget | undefined {
  const base = vertexBase(upstreamUrl);
  if (!base) return undefined;
  const path = `${base.path}${rest}`;
  return { origin: base.origin, host: base.host, path, pathWithQuery: query ? `${path}?${query}` : path };
}

const VERTEX_LOCATION = /^(.*?\/(?:v1|v1beta1))?\/projects\/([^/]+)\/locations\/([^/]+)/;
const REGIONAL_HOST = /^([a-z0-9-]+)-aiplatform\.googleapis\.com$/;

/** Vertex base paths parsed once per upstream_url: providers are few, requests many. */
const vertexBases = new Map<string, { origin: string; host: string; path: string } | null>();
const MAX_VERTEX_BASES = 1_000;

/** `…/v1/projects/{project}/locations/{location}` of a Vertex upstream_url, or undefined. */
function vertexBase(upstreamUrl: string): { origin: string; host: string; path: string } | undefined {
  let base = vertexBases.get(upstreamUrl);
  if (base === undefined) {
    const url = new URL(upstreamUrl);
    const match = VERTEX_LOCATION.exec(url.pathname);
    const region = REGIONAL_HOST.exec(url.hostname)?.[1];
    const prefix = match?.[1] ?? "/v1";
    const project = match?.[2];
    const location = match?.[3] ?? region;
    base =
      project && location
        ? { origin: url.origin, host: url.host, path: `${prefix}/projects/${project}/locations/${location}` }
        : null;
    if (vertexBases.size >= MAX_VERTEX_BASES) vertexBases.clear();
    vertexBases.set(upstreamUrl, base);
  }
  return base ?? undefined;
}
