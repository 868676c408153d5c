import type { ApiFlavor } from "@agentnet/contracts";
import type { CostShape } from "@agentnet/pricing";
import type { JsonObject } from "../domain/json";
import type { upstreamTarget } from "../upstream/pools";
import type { Restream } from "./restream";
import type { UsageCounts } from "./usage";

/**
 * A wire is a vendor format the proxy speaks to callers: its routes, where the caller's key is, what
 * of the caller's request reaches the vendor, how it reaches each upstream flavor that serves it,
 * where its usage is, how its stream ends and is cut at a cap, its error shape and its model
 * listing. One module per wire (wires/openai.ts, anthropic.ts, gemini.ts, bedrock.ts) implements
 * this; the modules of the clouds that serve those formats at their own paths (vertex.ts, azure.ts,
 * bedrock-runtime.ts) add routes and upstream dialects. Outside wires/, the proxy only calls these
 * members: nothing asks which wire or flavor it has.
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
  /** The usage a whole JSON answer reports, in its body or its headers (zero when it reports none). */
  answerUsage(body: unknown, headers: AnswerHeaders): UsageCounts;
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
  /** Headers an error carries in the vendor's shape (Bedrock's `x-amzn-errortype`). */
  errorHeaders(status: number): Readonly<Record<string, string>>;
  /** A model listing in the vendor's shape. */
  modelList(models: readonly ListedModel[], created: number): unknown;
}

/** A vendor answer's headers, names in lower case. */
export type AnswerHeaders = Readonly<Record<string, string | string[]>>;

export type WireName = "openai" | "anthropic" | "gemini" | "aws.bedrock";

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
  editBody(body: JsonObject, request: BodyRequest): Record<string, string>;
  /** How the vendor's answer to the route becomes this wire's, when the two differ (Bedrock's and Anthropic's). */
  restream?(route: Route): Restream;
}

/** What a request to one candidate is: its route, the candidate's model, whether it streams. */
export interface CandidateRequest {
  route: Route;
  /** The model the candidate serves the request with. */
  model: string;
  streams: boolean;
}

export interface TargetRequest extends CandidateRequest {
  /** The caller's query parameters this wire forwards. */
  query: string;
}

export interface BodyRequest extends CandidateRequest {
  /**
   * The `anthropic-beta` values (comma-separated: the provider's configured header, else the
   * caller's) that the provider accepts, undefined when none. The dialect places them: as the
   * `anthropic-beta` header it returns, or in the body where its vendor takes them (Bedrock's
   * `anthropic_beta`); the upstream gets that header only from the dialect.
   */
  betas: string | undefined;
  /** The betas the provider accepts (the provider's list, else its catalog entry's); undefined: every one. */
  acceptedBetas: readonly string[] | undefined;
}

export type VendorTarget = ReturnType<typeof upstreamTarget>;

/**
 * How a stream's bytes are cut into events: server-sent events (wires/sse.ts) or AWS's event
 * stream (wires/event-stream.ts). A capped stream is relayed whole events at a time.
 */
export interface Framing {
  /** Whether an answer of this content type is a stream in this framing. */
  carries(contentType: string): boolean;
  /** Where the last whole event of `bytes` ends, or -1 when none is whole. */
  lastEventEnd(bytes: Buffer): number;
  /** Where the event starting at `from` ends; the end of `bytes` when it does not. */
  nextEventEnd(bytes: Buffer, from: number): number;
  /** A reader for one stream: it hands each event's data (JSON text) to the watcher. */
  reader(): FrameReader;
}

export interface FrameReader {
  push(chunk: Uint8Array, sink: EventSink): void;
  end(sink: EventSink): void;
  /** Whether the bytes pushed so far end inside an event: nothing can be added to the stream then. */
  readonly midEvent: boolean;
}

export interface EventSink {
  /** One event's data: JSON text, or `[DONE]`. */
  data(data: string): void;
}

/**
 * A wire's event stream, as the shared watcher (wires/stream-watcher.ts) reads it: only events
 * that can matter are JSON-parsed, and a capped stream is ended in the vendor's own form.
 */
export interface StreamFormat {
  readonly framing: Framing;
  /** Whether an event (its raw data) may carry usage: cheap, and only those are parsed for it. */
  mentionsUsage(data: string): boolean;
  /** The usage an event carries, merged onto what earlier events said; undefined when none. */
  usage(event: JsonObject, base: UsageCounts): UsageCounts | undefined;
  /** Whether an event (its raw data) generates output: a capped stream counts those. */
  generates(data: string): boolean;
  /** Text of the first event an ending copies (its id, model), or undefined when it copies none. */
  readonly firstEventMarker: string | undefined;
  /** Whether an ending needs this event parsed (an open block, the response object). */
  structural(data: string, sawFirstEvent: boolean): boolean;
  /** Keeps what an ending needs of a parsed event of a capped stream. */
  track(event: JsonObject, structure: StreamStructure): void;
  /** The events that end the stream as if the model had reached its output limit, framed. */
  ending(soFar: StreamSoFar): string | Uint8Array;
  /**
   * The event that ends a stream its upstream broke off, in the form the vendor reports a failure
   * mid-stream (its SDKs raise it as an error rather than a cut connection).
   */
  broken(message: string): string | Uint8Array;
}

/** What of a stream's events its ending needs, as the format's `track` keeps it. */
export interface StreamStructure {
  /** The index of Anthropic's content block still open. */
  openBlock: number | undefined;
  /** The Responses object its `response.created` event carried. */
  response: JsonObject | undefined;
}

/** What a stream said before it was cut, as its ending needs it. */
export interface StreamSoFar extends StreamStructure {
  usage: UsageCounts;
  outputTokens: number;
  /** The first event `firstEventMarker` matched, parsed ({} when none came). */
  firstEvent: JsonObject;
}

/** The `track` of a format whose ending needs nothing of the events before it. */
export const trackNothing = (): void => {};

/**
 * A model listing the proxy answers (GET): the wire whose providers it lists, and its answer in
 * that vendor's shape, or undefined when it names one model the caller may not use (404).
 */
export interface Listing {
  wire: Wire;
  /** The path with any model left out, as metrics name it. */
  label: string;
  answer(models: readonly ListedModel[], created: number): unknown;
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
export type Ingress =
  | "openai"
  | "azure"
  | "anthropic"
  | "vertex_anthropic"
  | "gemini"
  | "vertex_gemini"
  | "bedrock";

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

/** The error headers of a vendor whose errors are their body alone. */
export const noErrorHeaders = (): Readonly<Record<string, string>> => NO_HEADERS;
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

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
