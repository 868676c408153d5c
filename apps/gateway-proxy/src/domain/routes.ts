import type { Operation, Wire } from "./wire";

/**
 * Where a client reached the proxy: each vendor's own paths, so its SDK or agent works with only
 * its base URL changed.
 * - `openai`: /v1/chat/completions, /v1/responses, /v1/embeddings.
 * - `azure`: Azure OpenAI's v1 API, /openai/v1/{operation}, and its deployment paths,
 *   /openai/deployments/{deployment}/{operation}?api-version=… (the deployment names the model),
 *   and /openai/responses?api-version=…, where the AzureOpenAI client sends the Responses API.
 * - `anthropic`: /v1/messages, /v1/messages/count_tokens.
 * - `vertex_anthropic`: Claude on Vertex,
 *   /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict|streamRawPredict,
 *   and …/models/count-tokens:rawPredict (the model in the body).
 * - `gemini`: the Gemini API, /v1beta/models/{model}:generateContent|streamGenerateContent|countTokens,
 *   and the same under /v1/.
 * - `vertex_gemini`: Gemini on Vertex, /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:…
 *   (and under /v1beta1/, where Google's SDK sends Vertex traffic, and without the project and
 *   location, as Vertex's express mode with an API key sends it).
 * The client's project and location are not used: the provider's upstream_url names its own.
 */
export type Ingress = "openai" | "azure" | "anthropic" | "vertex_anthropic" | "gemini" | "vertex_gemini";

export interface Route {
  ingress: Ingress;
  wire: Wire;
  operation: Operation;
  /** The path with its model left out: the label metrics and traces name the route by. */
  label: string;
  /** The model the path names (a Gemini or Vertex model, an Azure deployment); undefined when in the body. */
  pathModel: string | undefined;
  /** The path says the answer streams (streamGenerateContent, streamRawPredict); else the body's `stream`. */
  streams: boolean;
}

const OPENAI_OPERATIONS: Record<string, Operation> = {
  "chat/completions": "chat",
  responses: "responses",
  embeddings: "embeddings",
};

const EXACT: Record<string, Route> = {
  "/v1/chat/completions": plain("openai", "openai", "chat", "/v1/chat/completions"),
  "/v1/responses": plain("openai", "openai", "responses", "/v1/responses"),
  "/v1/embeddings": plain("openai", "openai", "embeddings", "/v1/embeddings"),
  "/v1/messages": plain("anthropic", "anthropic", "messages", "/v1/messages"),
  "/v1/messages/count_tokens": plain("anthropic", "anthropic", "count_tokens", "/v1/messages/count_tokens"),
  "/openai/v1/chat/completions": plain("azure", "openai", "chat", "/openai/v1/chat/completions"),
  "/openai/v1/responses": plain("azure", "openai", "responses", "/openai/v1/responses"),
  "/openai/v1/embeddings": plain("azure", "openai", "embeddings", "/openai/v1/embeddings"),
  // The AzureOpenAI client sends the Responses API here, the deployment in the body's `model`.
  "/openai/responses": plain("azure", "openai", "responses", "/openai/responses"),
};

function plain(ingress: Ingress, wire: Wire, operation: Operation, label: string): Route {
  return { ingress, wire, operation, label, pathModel: undefined, streams: false };
}

const AZURE_DEPLOYMENT = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|responses|embeddings)$/;
const GEMINI = /^\/(v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;
const VERTEX =
  /^\/(v1|v1beta1)(?:\/projects\/[^/]+\/locations\/[^/]+)?\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;

const GEMINI_OPERATIONS: Record<string, Operation> = {
  generateContent: "generate_content",
  streamGenerateContent: "generate_content",
  countTokens: "count_tokens",
};

/** The inference route a POST to `path` takes, or undefined when the proxy serves none there. */
export function matchRoute(path: string): Route | undefined {
  const exact = EXACT[path];
  if (exact) return exact;
  const azure = AZURE_DEPLOYMENT.exec(path);
  if (azure) {
    const [, deployment = "", operation = ""] = azure;
    const op = OPENAI_OPERATIONS[operation];
    if (!op) return undefined;
    return {
      ...plain("azure", "openai", op, `/openai/deployments/{deployment}/${operation}`),
      pathModel: decoded(deployment),
    };
  }
  const gemini = GEMINI.exec(path);
  if (gemini) {
    const [, version = "", model = "", method = ""] = gemini;
    const operation = GEMINI_OPERATIONS[method];
    if (!operation) return undefined;
    return {
      ingress: "gemini",
      wire: "gemini",
      operation,
      label: `/${version}/models/{model}:${method}`,
      pathModel: decoded(model),
      streams: method === "streamGenerateContent",
    };
  }
  const vertex = VERTEX.exec(path);
  if (vertex) {
    const [, version = "", publisher = "", model = "", method = ""] = vertex;
    const located = path.includes("/projects/") ? "/projects/{project}/locations/{location}" : "";
    const models = `/${version}${located}/publishers/${publisher}/models`;
    const label = `${models}/{model}:${method}`;
    if (publisher === "google") {
      const operation = GEMINI_OPERATIONS[method];
      if (!operation) return undefined;
      return {
        ingress: "vertex_gemini",
        wire: "gemini",
        operation,
        label,
        pathModel: decoded(model),
        streams: method === "streamGenerateContent",
      };
    }
    if (method !== "rawPredict" && method !== "streamRawPredict") return undefined;
    if (model === "count-tokens") {
      if (method !== "rawPredict") return undefined;
      return plain("vertex_anthropic", "anthropic", "count_tokens", `${models}/count-tokens:rawPredict`);
    }
    return {
      ingress: "vertex_anthropic",
      wire: "anthropic",
      operation: "messages",
      label,
      pathModel: decoded(model),
      streams: method === "streamRawPredict",
    };
  }
  return undefined;
}

/** The wire of a path the proxy does not serve, for the shape of its 404. */
export function wireOfUnknownPath(path: string, anthropicVersion: boolean): Wire {
  if (path.startsWith("/v1/messages") || anthropicVersion || path.includes("/publishers/anthropic/")) {
    return "anthropic";
  }
  if (
    path.startsWith("/v1beta/") ||
    path.includes("/publishers/google/") ||
    path.includes(":generateContent")
  ) {
    return "gemini";
  }
  return "openai";
}

/** A path segment as the client meant it (`claude-sonnet-4-5%4020250929` is `…@20250929`). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
