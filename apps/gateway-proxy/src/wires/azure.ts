import { decodedSegment, type Operation, plainRoute, type Routes, type Wire } from "./wire";

/**
 * Azure OpenAI: OpenAI's wire at Azure's paths. This module holds the routes its clients take
 * (`azureRoutes`) and where a request goes at an Azure provider (`azureV1Base`).
 */

const AZURE_DEPLOYMENT = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|responses|embeddings)$/;

const OPERATIONS: Record<string, Operation> = {
  "chat/completions": "chat",
  responses: "responses",
  embeddings: "embeddings",
};

/**
 * Azure OpenAI's v1 API, /openai/v1/{operation}, and its deployment paths,
 * /openai/deployments/{deployment}/{operation}?api-version=… (the deployment names the model), and
 * /openai/responses?api-version=…, where the AzureOpenAI client sends the Responses API (the
 * deployment in the body's `model`).
 */
export function azureRoutes(openai: Wire): Routes {
  return {
    exact: {
      "/openai/v1/chat/completions": plainRoute("azure", openai, "chat", "/openai/v1/chat/completions"),
      "/openai/v1/responses": plainRoute("azure", openai, "responses", "/openai/v1/responses"),
      "/openai/v1/embeddings": plainRoute("azure", openai, "embeddings", "/openai/v1/embeddings"),
      "/openai/responses": plainRoute("azure", openai, "responses", "/openai/responses"),
    },
    match(path) {
      const azure = AZURE_DEPLOYMENT.exec(path);
      if (!azure) return undefined;
      const [, deployment = "", operation = ""] = azure;
      const op = OPERATIONS[operation];
      if (!op) return undefined;
      return {
        ...plainRoute("azure", openai, op, `/openai/deployments/{deployment}/${operation}`),
        pathModel: decodedSegment(deployment),
      };
    },
  };
}

/** An upstream_url that is an origin alone, with or without a query. */
const ORIGIN_ONLY = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]+)\/?(\?[^#]*)?$/i;

/**
 * An Azure resource's root (`https://{resource}.openai.azure.com`: the catalog's default host, the
 * portal's "Endpoint") serves the v1 API under `/openai`: a root upstream_url gets it, so that the
 * data plane reaches `…/openai/v1/…` as with `…/openai/v1` written out.
 */
export const azureV1Base = (upstreamUrl: string): string =>
  upstreamUrl.replace(
    ORIGIN_ONLY,
    (_, origin: string, query: string | undefined) => `${origin}/openai${query ?? ""}`,
  );
