import { type GatewayRequestEvent, MAX_MODEL_LENGTH } from "@agentnet/contracts";
import { clientTraceContext, endHttpSpan, type HttpAnswer, type HttpRequest } from "@agentnet/service-kit";
import {
  type Attributes,
  context,
  createContextKey,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { bounded } from "../domain/request-shape";
import type { RequestRecord } from "../events/build";
import type { Operation, Route, Wire } from "../wires";

/*
 * The proxy's span per inference request, named and described by the GenAI semantic conventions
 * (`chat <model>`, `gen_ai.*`) and agentnet's own attributes (`agentnet.*`): who, what the gateway
 * decided and why, what it cost. Never a prompt, a completion, a header or a key.
 */

/** False until a proxy in this process traces: with tracing off, describing a request tests this alone. */
let tracing = false;

/** The GenAI operation of each route: the Responses and Messages APIs are chats too. */
const GEN_AI_OPERATION: Record<Operation, string> = {
  chat: "chat",
  responses: "chat",
  messages: "chat",
  generate_content: "generate_content",
  embeddings: "embeddings",
  count_tokens: "count_tokens",
};

interface InferenceSpan {
  span: Span;
  operation: string;
}

const INFERENCE_SPAN = createContextKey("agentnet inference span");

/**
 * Handles an inference request under its SERVER span (continuing a client's `traceparent`),
 * active while it is handled: its bus requests (caller, snapshot, leases) are its children, and
 * `describeRequest` finds it when the request's event is published.
 */
export function traceInference(
  tracer: Tracer,
  req: HttpRequest,
  res: HttpAnswer,
  route: Route,
  path: string,
  handle: () => Promise<void>,
): Promise<void> {
  tracing = true;
  const parent = clientTraceContext(req.headers);
  const name = GEN_AI_OPERATION[route.operation];
  const span = tracer.startSpan(
    name,
    {
      kind: SpanKind.SERVER,
      attributes: {
        "gen_ai.operation.name": name,
        "http.request.method": "POST",
        "http.route": route.label,
        "url.path": path,
      },
    },
    parent,
  );
  const active = trace.setSpan(parent, span).setValue(INFERENCE_SPAN, { span, operation: name });
  return context.with(active, handle).then(
    () => endHttpSpan(span, res.statusCode),
    (error: unknown) => {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
      endHttpSpan(span, 500);
      throw error;
    },
  );
}

/**
 * Describes the request's span by its event, and puts the span's trace id on the event (the access
 * log keeps it). Returns the span's context for the event's headers, so the services consuming it
 * join the trace; undefined when tracing is off or the request's trace is not sampled.
 */
export function describeRequest(event: GatewayRequestEvent, record: RequestRecord): SpanContext | undefined {
  if (!tracing) return undefined;
  const inference = context.active().getValue(INFERENCE_SPAN) as InferenceSpan | undefined;
  if (!inference?.span.isRecording()) return undefined;
  const { span, operation } = inference;
  if (event.model !== "") span.updateName(`${operation} ${event.model}`);
  span.setAttributes(eventAttributes(event, record.wire));
  // The vendor's word, so bounded like the model a client names.
  if (record.responseModel)
    span.setAttribute("gen_ai.response.model", bounded(record.responseModel, MAX_MODEL_LENGTH));
  const spanContext = span.spanContext();
  if (!(spanContext.traceFlags & TraceFlags.SAMPLED)) return undefined;
  event.trace_id = spanContext.traceId;
  return spanContext;
}

function eventAttributes(event: GatewayRequestEvent, wire: Wire): Attributes {
  return {
    // The wire names the vendor's API; `gen_ai.system` is the older name some backends still read.
    "gen_ai.provider.name": wire.name,
    "gen_ai.system": wire.name,
    "gen_ai.request.model": event.model,
    // Every input token, cached ones included, whichever way the vendor splits them.
    "gen_ai.usage.input_tokens": event.total_tokens - event.output_tokens,
    "gen_ai.usage.output_tokens": event.output_tokens,
    "gen_ai.usage.cache_read.input_tokens": event.cached_input_tokens,
    "gen_ai.usage.cache_creation.input_tokens": event.cache_creation_tokens,
    "agentnet.request_id": event.id,
    "agentnet.account_id": event.account_id,
    "agentnet.user_id": event.user_id,
    "agentnet.provider.id": event.resolved_provider_id,
    "agentnet.policy.id": event.selected_policy_id,
    "agentnet.decision": event.decision,
    "agentnet.stream": event.stream,
    "agentnet.cost_usd": event.cost_usd,
    ...(event.deny_reason === "" ? {} : { "agentnet.deny_reason": event.deny_reason }),
    ...(event.session_id === "" ? {} : { "agentnet.session_id": event.session_id }),
  };
}
