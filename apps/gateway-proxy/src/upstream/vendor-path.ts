import type { ApiFlavor } from "@agentnet/contracts";
import { forwardedQuery } from "../domain/forwarding";
import type { Route } from "../domain/routes";
import { upstreamTarget } from "./pools";

export type VendorTarget = ReturnType<typeof upstreamTarget>;

/** The OpenAI-style path of each operation of the OpenAI wire, whatever path the client used (Azure's). */
const OPENAI_PATHS = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  embeddings: "/v1/embeddings",
} as const;

/**
 * Where a request goes at its provider: the provider's upstream_url, and the path the provider's
 * API serves the route's operation at. The route's wire decides the operation, the provider's
 * flavor its address:
 * - OpenAI wire: /v1/chat/completions, /v1/responses, /v1/embeddings after upstream_url's prefix
 *   (an Azure provider's `…/openai/v1`, or `/openai/v1` at its resource root), whichever path the
 *   client came by; on Vertex, …/endpoints/openapi/chat/completions (and `embeddings`).
 * - Anthropic wire: /v1/messages(/count_tokens) on Anthropic; on Vertex,
 *   …/publishers/anthropic/models/{model}:rawPredict (`streamRawPredict` for a stream, and the
 *   `count-tokens` model for token counting).
 * - Gemini wire: /v1beta/models/{model}:{method} on the Gemini API (the client's version when it
 *   came by the Gemini API's paths); …/publishers/google/models/{model}:{method} on Vertex.
 * A Vertex provider's upstream_url names its project and location
 * (`https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}`, with or
 * without a further path such as `/endpoints/openapi`); undefined when it does not.
 */
export function vendorTarget(
  upstreamUrl: string,
  flavor: ApiFlavor,
  route: Route,
  model: string,
  streams: boolean,
  clientQuery: string,
): VendorTarget | undefined {
  const { operation, wire } = route;
  const query = forwardedQuery(wire, clientQuery);
  if (wire === "openai") {
    const path =
      operation === "responses" || operation === "embeddings" ? OPENAI_PATHS[operation] : OPENAI_PATHS.chat;
    if (flavor === "vertex") return vertexTarget(upstreamUrl, vertexOpenAiPath(path), query);
    return upstreamTarget(flavor === "azure_openai" ? azureV1Base(upstreamUrl) : upstreamUrl, path, query);
  }
  const counting = operation === "count_tokens";
  if (wire === "anthropic") {
    if (flavor !== "vertex") {
      return upstreamTarget(upstreamUrl, counting ? "/v1/messages/count_tokens" : "/v1/messages", query);
    }
    const method = counting ? "rawPredict" : streams ? "streamRawPredict" : "rawPredict";
    return vertexTarget(
      upstreamUrl,
      vertexModelPath("anthropic", counting ? "count-tokens" : model, method),
      "",
    );
  }
  const method = counting ? "countTokens" : streams ? "streamGenerateContent" : "generateContent";
  if (flavor === "vertex") return vertexTarget(upstreamUrl, vertexModelPath("google", model, method), query);
  const version = route.ingress === "gemini" && route.label.startsWith("/v1/") ? "v1" : "v1beta";
  const target = upstreamTarget(
    upstreamUrl.replace(/\/(v1|v1beta)\/*$/, ""),
    `/${version}/models/${pathSegment(model)}:${method}`,
    query,
  );
  return target;
}

/** An upstream_url that is an origin alone, with or without a query. */
const ORIGIN_ONLY = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]+)\/?(\?[^#]*)?$/i;

/**
 * An Azure resource's root (`https://{resource}.openai.azure.com`: the catalog's default host, the
 * portal's "Endpoint") serves the v1 API under `/openai`: a root upstream_url gets it, so that the
 * data plane reaches `…/openai/v1/…` as with `…/openai/v1` written out.
 */
const azureV1Base = (upstreamUrl: string): string =>
  upstreamUrl.replace(
    ORIGIN_ONLY,
    (_, origin: string, query: string | undefined) => `${origin}/openai${query ?? ""}`,
  );

/**
 * A Vertex model's method (`…/publishers/{publisher}/models/{model}:{method}`); Vertex serves
 * OpenAI-format requests elsewhere, at `…/endpoints/openapi/…` (`chat/completions`, `embeddings`),
 * not under `/v1` (`vertexOpenAiPath`).
 */
const vertexModelPath = (publisher: "anthropic" | "google", model: string, method: string) =>
  `/publishers/${publisher}/models/${pathSegment(model)}:${method}`;
const vertexOpenAiPath = (openAiPath: string) => `/endpoints/openapi${openAiPath.replace(/^\/v1/, "")}`;

/** `rest` after the project and location the Vertex upstream_url names; undefined when it names none. */
function vertexTarget(upstreamUrl: string, rest: string, query: string): VendorTarget | undefined {
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

/** A model as one path segment: nothing in it can reach another path; `@` (Vertex's versions) stays. */
const pathSegment = (model: string): string => encodeURIComponent(model).replaceAll("%40", "@");
