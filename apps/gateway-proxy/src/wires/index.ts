import type { ApiFlavor } from "@agentnet/contracts";
import type { JsonObject } from "../domain/json";
import { anthropic, anthropicClientSent, anthropicRoutes } from "./anthropic";
import { azureRoutes } from "./azure";
import { bedrockClientSent, bedrockConverse, bedrockInvoke, bedrockListing, bedrockRoutes } from "./bedrock";
import { gemini, geminiClientSent, geminiRoutes } from "./gemini";
import { openAiRoutes, openai } from "./openai";
import type { Restream } from "./restream";
import { vertexRoutes } from "./vertex";
import type { BodyRequest, Listing, Route, Routes, VendorTarget, Wire } from "./wire";

export { StreamWatcher } from "./stream-watcher";
export { completionText, type UsageCounts, zeroUsage } from "./usage";
export {
  type BodyRequest,
  isMetered,
  type ListedModel,
  type Listing,
  type Operation,
  type Route,
  type VendorTarget,
  type Wire,
} from "./wire";

/** Each wire, by a name for tests and golden files (Bedrock has two: its invoke and Converse APIs). */
export const WIRES = {
  openai,
  anthropic,
  gemini,
  bedrock_invoke: bedrockInvoke,
  bedrock_converse: bedrockConverse,
} as const satisfies Record<string, Wire>;

const ROUTES: Routes[] = [
  openAiRoutes,
  azureRoutes(openai),
  anthropicRoutes,
  geminiRoutes,
  vertexRoutes(anthropic, gemini),
  bedrockRoutes,
];

/** Every exact path in one table: most requests are found with one lookup. */
const EXACT: Readonly<Record<string, Route>> = Object.assign({}, ...ROUTES.map((routes) => routes.exact));

/** The inference route a POST to `path` takes, or undefined when the proxy serves none there. */
export function matchRoute(path: string): Route | undefined {
  const exact = EXACT[path];
  if (exact) return exact;
  for (const routes of ROUTES) {
    const route = routes.match(path);
    if (route) return route;
  }
  return undefined;
}

type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The wire of a path the proxy does not serve, for the shape of its 404. */
export function wireOfUnknownPath(path: string, headers: IncomingHeaders): Wire {
  if (anthropicClientSent(path, headers["anthropic-version"] !== undefined)) return anthropic;
  if (geminiClientSent(path)) return gemini;
  if (bedrockClientSent(path)) return bedrockInvoke;
  return openai;
}

/**
 * The model listing a GET to `path` asks for, or undefined when the proxy serves none there:
 * GET /v1/models and /v1beta/models, in Gemini's shape at /v1beta/models, or at /v1/models (where
 * Google's SDK lists by default) with the key as only Google's clients send it; Anthropic's when
 * `anthropic-version` is sent; else OpenAI's. Bedrock's control plane listings (wires/bedrock.ts).
 */
export function matchListing(path: string, headers: IncomingHeaders, query: string): Listing | undefined {
  if (path !== "/v1/models" && path !== "/v1beta/models") return bedrockListing(path);
  let wire: Wire;
  if (
    path === "/v1beta/models" ||
    headers["x-goog-api-key"] !== undefined ||
    headers["x-goog-api-client"] !== undefined ||
    new URLSearchParams(query).has("key")
  ) {
    wire = gemini;
  } else wire = headers["anthropic-version"] === undefined ? openai : anthropic;
  return { wire, label: path, answer: wire.modelList };
}

/** A provider fits a route when its flavor serves the route's wire, as it is or rewritten. */
export const flavorFits = (wire: Wire, flavor: ApiFlavor): boolean => wire.dialect(flavor) !== undefined;

/** The caller's query parameters the vendor of `wire` gets (raw, in the caller's order). */
export function forwardedQuery(wire: Wire, query: string): string {
  if (query === "") return "";
  return query
    .split("&")
    .filter((pair) => wire.forwardedQuery.has(pair.split("=", 1)[0] ?? ""))
    .join("&");
}

/**
 * Where a request goes at a provider of `flavor` (its upstream_url), with what the route's wire
 * forwards of the client's query; undefined when the flavor does not serve the wire or
 * upstream_url does not say.
 */
export function vendorTarget(
  upstreamUrl: string,
  flavor: ApiFlavor,
  route: Route,
  model: string,
  streams: boolean,
  clientQuery: string,
): VendorTarget | undefined {
  const query = forwardedQuery(route.wire, clientQuery);
  return route.wire.dialect(flavor)?.target(upstreamUrl, { route, model, streams, query });
}

/** How a stream from a provider of `flavor` becomes the route's wire's, when the two frame it otherwise. */
export const answerRestream = (flavor: ApiFlavor, route: Route): Restream | undefined =>
  route.wire.dialect(flavor)?.restream?.(route);

/** Edits the caller's body (in place) into what a provider of `flavor` takes; returns the headers it needs. */
export function editForVendor(
  body: JsonObject,
  flavor: ApiFlavor,
  request: BodyRequest,
): Record<string, string> {
  return request.route.wire.dialect(flavor)?.editBody(body, request) ?? {};
}
