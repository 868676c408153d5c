import type { CounterPlan, Hold } from "@agentnet/caps";
import type { CatalogEntry } from "@agentnet/catalog";
import type {
  Caller,
  GatewayProvider,
  Policy,
  PolicyRouting,
  RequestAttempt,
  Settings,
} from "@agentnet/contracts";
import type { CostBreakdown } from "@agentnet/pricing";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import type { CapturePlan } from "../domain/capture";
import type { AdmittedTokens, Pricing } from "../domain/estimate";
import type { JsonObject } from "../domain/json";
import type { AccountView } from "../snapshot/cache";
import type { ForwardResult } from "../upstream/forward";
import type { Operation, Route, UsageCounts, Wire } from "../wires";

/*
 * The request path as stages, each a function from one of these values to the next:
 *   receive(request)            → Received | none     the caller, the body, the configured account
 *   admit(received)             → Admitted | Refused  identifiers, host, decision, prices, cap hold
 *   forward(admitted)           → Forwarded           credential, upstream request, the call; a
 *                                                     failure before the answer's first byte is
 *                                                     tried again on the next candidate, the last
 *                                                     one's relayed as the vendor sent it: the
 *                                                     outcome (Answered | Relayed | Failed), the
 *                                                     candidate that answered, every attempt
 *   account(admitted, answered, candidate)
 *                               → Accounted           usage, cost (at the answering candidate's
 *                                                     prices), captured texts
 * `handleInference` (http/proxy.ts) runs them, answers refusals and failures in the vendor's error
 * shape, and ends every received request in one place: its row built from what the stages
 * returned (`requestRecord`), its hold settled, its one event published.
 * A request `receive` refuses (bad token, bad body, account unknown or not configured) has no row.
 */

/** An inference request as routed. */
export interface InferenceRequest {
  req: HttpRequest;
  res: HttpAnswer;
  route: Route;
  /** The route's operation and wire. */
  operation: Operation;
  wire: Wire;
  path: string;
  /** The client's query string: only what its wire forwards goes upstream. */
  query: string;
}

/**
 * A request of a known, configured account, its body valid: from here on it ends in one event,
 * whose row is built from this and what the later stages return (`requestRecord`).
 */
export interface Received {
  request: InferenceRequest;
  id: string;
  startedAt: number;
  caller: Caller;
  /** Log collection was on: the row keeps source_ip, host and path only then. */
  logged: boolean;
  sourceIp: string;
  /** The body, parsed; never edited (each candidate's vendor gets an edited copy). */
  body: JsonObject;
  /** The body as the caller sent it: what goes upstream keeps its bytes but for the members edited. */
  bodyText: string;
  /** `bodyText`'s bytes as they came: what goes upstream is cut from them, not encoded again. */
  bodyBytes: Buffer;
  /** The model as the client named it: in the path (Gemini, Vertex, Azure deployments) or the body. */
  model: string;
  /** The client asked for a stream (a streaming route, or the body's `stream`). */
  stream: boolean;
  /**
   * The answer comes as server-sent events (the body's `stream`, or a streaming route; Gemini's only
   * with `alt=sse`): it is held a step at a time and may be cut at a cap. A Gemini stream without
   * `alt=sse` is one JSON array, held and read whole.
   */
  sse: boolean;
  /** Counted, capped, costed and logged (`isMetered`). */
  metered: boolean;
  sessionId: string;
  view: AccountView;
  settings: Settings;
}

/**
 * Where a request may be sent: a provider its authorising policy grants, the provider's catalog
 * entry, the model as that provider names it, and what the model costs there.
 */
export interface Candidate {
  provider: GatewayProvider;
  catalog: CatalogEntry;
  policy: Policy;
  model: string;
  pricing: Pricing;
}

/** A request under caps: its hold on the leases, and for a stream how far its output is covered. */
export interface CappedRequest {
  hold: Hold;
  plans: CounterPlan[];
  heldOutput: number;
  /** The most output the request may generate (its own cap, else the model's): a stream never needs more held. */
  worstOutput: number;
  /** Set when the proxy ended the stream at a cap: the row's deny_reason. */
  cutReason: string;
}

/** A request the gateway lets through: where it goes, and what it holds under caps. */
export interface Admitted {
  outcome: "admitted";
  received: Received;
  /** Where the first attempt goes, the hold priced for it (`Forwarded.candidate`: where it went). */
  candidate: Candidate;
  /** Where attempts go, in the order of the policy's strategy; usually just `candidate`. */
  candidates: readonly Candidate[];
  routing: PolicyRouting;
  /** What the request holds under caps, and is charged should this proxy die before it ends. */
  tokens: AdmittedTokens;
  /** Undefined when no limit applies. */
  capped: CappedRequest | undefined;
  capture: CapturePlan;
  /** The prompt as the client sent it (before forwarding edits the body); empty unless captured. */
  prompt: string;
}

/**
 * What forwarding came to: its outcome, the candidate that answered (the last one tried when none
 * did; its prices are the request's), and every attempt (the row lists them once there are two).
 */
export interface Forwarded {
  outcome: Answered | Relayed | Failed;
  candidate: Candidate;
  attempts: RequestAttempt[];
  /** Where the last attempt went at its provider; undefined when none got that far. */
  target: { host: string; path: string } | undefined;
}

/** What an answered request used and costs, and what of its texts is kept (`account`). */
export interface Accounted {
  status: number;
  /** The answer streamed (or the client asked for a stream). */
  stream: boolean;
  /** Why the proxy cut the answer (a cap), else empty. */
  denyReason: string;
  usage: UsageCounts;
  cost: CostBreakdown;
  prompt: string | undefined;
  completion: string | undefined;
  /** The model the vendor says answered (traces only). */
  responseModel: string | undefined;
}

/** An answer in the vendor's error shape (`sendError`) instead of the upstream's. */
export interface Refusal {
  status: number;
  /** The reason code: in the answer's body and its `x-agentnet-reason` header. */
  reason: string;
  message: string;
  headers?: Record<string, string>;
}

/** The gateway refused the request before forwarding it: its row is a deny row with the reason. */
export interface Refused extends Refusal {
  outcome: "refused";
  /** Where the policy decision sent the request, once it was made: the row names it. */
  routed?: Routed;
}

/** The provider, policy and model a policy decision names (none when no policy matched). */
export interface Routed {
  provider: GatewayProvider | undefined;
  policyId: string;
  model: string;
}

/** The upstream's answer, relayed to the client: whole, aborted by the client, or cut at a cap. */
export type Answered = Exclude<ForwardResult, { outcome: "unreachable" | "retryable" }>;

/**
 * The last attempt's vendor failure (a 429 or 5xx held back while another attempt could follow),
 * relayed as it came: the vendor's status, headers and body. Nothing was used or charged.
 */
export interface Relayed {
  outcome: "relayed";
  status: number;
}

/** No answer came from upstream (or none could be asked for): nothing has reached the client. */
export interface Failed extends Refusal {
  outcome: "failed";
  /** The row's deny_reason: the gateway's own reason when it would not send, empty when the upstream failed. */
  denyReason: string;
  /** The provider cannot be used at all (its credential, its address): the next candidate is tried. */
  elsewhere?: boolean;
}
