import type { ApiFlavor } from "@agentnet/contracts";
import type { CostShape } from "@agentnet/pricing";
import type { JsonObject } from "../domain/json";
import type { upstreamTarget } from "../upstream/pools";
import type { UsageCounts } from "./usage";

/**
 * A wire is a vendor format the proxy speaks to callers: its routes, where the caller's key is, what
 * of the caller's request reaches the vendor, how it reaches each upstream flavor that serves it,
 * where its usage is, how its stream ends and is cut at a cap, its error shape and its model
 * listing. One module per wire (wires/openai.ts, anthropic.ts, gemini.ts) implements this; the
 * modules of the clouds that serve those formats at their own paths (vertex.ts, azure.ts) add routes
 * and upstream dialects. Outside wires/, the proxy only calls these members: nothing asks which
 * wire or flavor it has.
 */
export interface Wire {
  /** The vendor API's name, as traces report it (`gen_ai.provider.name`). */
  readonly name: WireName;
  /** The caller may send its key as the `key` query parameter (Google's clients do). */
  readonly keyInQuery: boolean;
  /** The caller's headers the vendor gets (lower case); the proxy's own are added to them. */
  readonly forwardedHeaders: ReadonlySet<string>;
  /** The caller's query parameters the vendor gets. */
  readonly forwardedQuery: ReadonlySet<string>;
  /**
   * How this wire's requests reach an upstream of `flavor`, as they are or rewritten; undefined
   * when that flavor does not serve this format (the provider does not fit the route).
   */
  dialect(flavor: ApiFlavor): Dialect | undefined;
  /** Whether a streamed answer comes as server-sent events, by the request's query. */
  streamsAsEvents(query: string): boolean;
  /** The usage a whole JSON answer reports (zero when it reports none). */
  answerUsage(body: unknown): UsageCounts;
  readonly stream: StreamFormat;
  /** How usage splits cached input: beside the input (Anthropic's) or inside it (OpenAI's). */
  readonly costShape: CostShape;
  /** Every token the upstream processed, as the access log totals them. */
  totalTokens(usage: UsageCounts): number;
  /** Input tokens neither read from nor written to a cache. */
  uncachedInput(usage: UsageCounts): number;
  /** The status the vendor answers when overloaded, which its SDKs retry after `retry-after`. */
  readonly overloadedStatus: number;
  /** An error body in the vendor's shape; `text` already names the reason code. */
  errorBody(status: number, reason: string, text: string): unknown;
  /** A model listing in the vendor's shape. */
  modelList(models: readonly ListedModel[], created: number): unknown;
}

export type WireName = "openai" | "anthropic" | "gemini";

/** How one wire's requests go to one upstream flavor. */
export interface Dialect {
  /**
   * Where the request goes at the provider: its upstream_url and the path its API serves the
   * route's operation at; undefined when upstream_url does not say (a Vertex URL without its project).
   */
  target(upstreamUrl: string, request: TargetRequest): VendorTarget | undefined;
  /**
   * Edits the caller's body (in place) into the one the vendor takes; the rest passes through as
   * the caller sent it. Returns the headers the edited body needs.
   */
  editBody(body: JsonObject, request: TargetRequest): Record<string, string>;
}

export interface TargetRequest {
  route: Route;
  /** The model the candidate serves the request with. */
  model: string;
  streams: boolean;
  /** The caller's query parameters this wire forwards. */
  query: string;
}

export type VendorTarget = ReturnType<typeof upstreamTarget>;

/**
 * A wire's event stream, as the shared server-sent-events watcher (wires/sse.ts) reads it: only
 * events that can matter are JSON-parsed, and a capped stream is ended in the vendor's own form.
 */
export interface StreamFormat {
  /** Text every event that carries usage contains: other events are not parsed for it. */
  readonly usageMarker: string;
  /** The usage an event carries, merged onto what earlier events said; undefined when none. */
  usage(event: JsonObject, base: UsageCounts): UsageCounts | undefined;
  /** Whether an event (its raw data) generates output: a capped stream counts those. */
  generates(data: string): boolean;
  /** Text of the first event an ending copies (its id, model), or undefined when it copies none. */
  readonly firstEventMarker: string | undefined;
  /** Whether an ending needs this event parsed (an open block, the response object). */
  structural(data: string, sawFirstEvent: boolean): boolean;
  /** The events that end the stream as if the model had reached its output limit. */
  ending(soFar: StreamSoFar): string;
}

/** What a stream said before it was cut, as its ending needs it. */
export interface StreamSoFar {
  usage: UsageCounts;
  outputTokens: number;
  /** The first event `firstEventMarker` matched, parsed ({} when none came). */
  firstEvent: JsonObject;
  /** The index of Anthropic's content block still open. */
  openBlock: number | undefined;
  /** The Responses object its `response.created` event carried. */
  response: JsonObject | undefined;
}

export interface ListedModel {
  id: string;
  owner: string;
  label: string;
}

/** The inference operations the proxy forwards; token counting is Anthropic's or Gemini's by its wire. */
export type Operation =
  | "chat"
  | "responses"
  | "embeddings"
  | "messages"
  | "count_tokens"
  | "generate_content";

/**
 * Whether an operation is metered: counted, capped, costed and logged. Token counting generates
 * nothing and is free at the vendor, so it is only authenticated and policy-checked.
 */
export const isMetered = (operation: Operation): boolean => operation !== "count_tokens";

/** Where a client reached the proxy: a vendor's own paths (see each wire module's routes). */
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

/** A module's routes: paths it serves as they are, and patterns tried after every exact path. */
export interface Routes {
  exact: Readonly<Record<string, Route>>;
  match(path: string): Route | undefined;
}

export function plainRoute(ingress: Ingress, wire: Wire, operation: Operation, label: string): Route {
  return { ingress, wire, operation, label, pathModel: undefined, streams: false };
}

/** A path segment as the client meant it (`claude-sonnet-4-5%4020250929` is `…@20250929`). */
export function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A model as one path segment: nothing in it can reach another path; `@` (Vertex's versions) stays. */
export const pathSegment = (model: string): string => encodeURIComponent(model).replaceAll("%40", "@");

/** Error types OpenAI and Anthropic both use, by status, so SDKs raise their usual error classes. */
export function vendorErrorType(status: number): string {
  if (status === 400 || status === 413) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  return "api_error";
}

/** An SSE event, named when the vendor names its events. */
export const sseEvent = (event: unknown, name?: string) =>
  `${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(event)}\n\n`;
