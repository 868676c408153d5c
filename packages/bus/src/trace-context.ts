import { AppError } from "@agentnet/contracts";
import { headers, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/transport-node";
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/*
 * Trace context over NATS: W3C `traceparent`/`tracestate` in message headers, injected on a
 * request or an event publish and extracted where it is served or consumed (docs/ARCHITECTURE.md,
 * "Tracing"). Traces start at the HTTP edges (api-gateway, gateway proxy): a bus call made outside
 * a traced request (lease renewals, heartbeats, snapshots refreshed in the background) and a
 * message that carries no trace context get no span, so background chatter never floods a trace
 * store.
 */

const propagator = new W3CTraceContextPropagator();

const setter: TextMapSetter<MsgHdrs> = { set: (carrier, key, value) => carrier.set(key, value) };
const getter: TextMapGetter<MsgHdrs | undefined> = {
  keys: (carrier) => carrier?.keys() ?? [],
  get: (carrier, key) => (carrier?.has(key) ? carrier.get(key) : undefined),
};

const tracers = new WeakMap<NatsConnection, Tracer>();
/** False until a connection is traced: with tracing off, every bus call tests this and does nothing else. */
let anyTraced = false;

/**
 * Traces what goes over `nc` with `tracer` (the service's own: each service in a process keeps
 * its `service.name`); undefined (tracing off) leaves it untraced. The HTTP services take their
 * tracer from their connection too (`tracerOf`).
 */
export function useTracer(nc: NatsConnection, tracer: Tracer | undefined): void {
  if (!tracer) return;
  tracers.set(nc, tracer);
  anyTraced = true;
}

/** The tracer of `nc`, undefined when it is not traced. */
export const tracerOf = (nc: NatsConnection): Tracer | undefined => (anyTraced ? tracers.get(nc) : undefined);

const messaging = (destination: string, operation: "send" | "process"): Attributes => ({
  "messaging.system": "nats",
  "messaging.destination.name": destination,
  "messaging.operation.type": operation,
});

/** Notes an error answer on `span`; only a fault (5xx) fails it: a 4xx is an answer like any other. */
function recordAnswer(span: Span, status: number, code: string, message: string): void {
  span.setAttribute("agentnet.error.code", code);
  if (status < 500) return;
  span.setAttribute("error.type", code);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

function recordError(span: Span, error: unknown): void {
  if (error instanceof AppError) {
    recordAnswer(span, error.status, error.code, error.message);
    return;
  }
  span.setAttribute("error.type", error instanceof Error ? error.name : "unknown");
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

/**
 * Runs a bus request under a CLIENT span named by its subject, its context in the request's
 * headers, when a traced request makes it; else runs it plain.
 */
export async function withClientSpan<T>(
  tracer: Tracer,
  subject: string,
  call: (headers?: MsgHdrs) => Promise<T>,
): Promise<T> {
  const parent = context.active();
  if (!trace.getSpan(parent)) return call();
  const span = tracer.startSpan(
    subject,
    { kind: SpanKind.CLIENT, attributes: messaging(subject, "send") },
    parent,
  );
  const carrier = headers();
  propagator.inject(trace.setSpan(parent, span), carrier, setter);
  try {
    return await call(carrier);
  } catch (error) {
    recordError(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** What an answer came to: the reply, or the error envelope's status and code. */
export type AnswerOutcome =
  | { ok: true }
  | { ok: false; error: { status: number; code: string; message: string } };

/**
 * Answers a request under a SERVER span that continues the caller's trace, the span active while
 * the handler runs (its own bus calls are its children); a request without trace context is
 * answered plain.
 */
export async function withServerSpan(
  tracer: Tracer,
  msg: Msg,
  answer: () => Promise<AnswerOutcome>,
): Promise<AnswerOutcome> {
  const parent = extractContext(msg.headers);
  if (!parent) return answer();
  const span = tracer.startSpan(
    msg.subject,
    { kind: SpanKind.SERVER, attributes: messaging(msg.subject, "process") },
    parent,
  );
  const outcome = await context.with(trace.setSpan(parent, span), answer);
  if (!outcome.ok) recordAnswer(span, outcome.error.status, outcome.error.code, outcome.error.message);
  span.end();
  return outcome;
}

/** Headers carrying `parent` (a request's span context) with an event published after the request. */
export function traceHeaders(parent: SpanContext): MsgHdrs {
  const carrier = headers();
  propagator.inject(trace.setSpanContext(ROOT_CONTEXT, parent), carrier, setter);
  return carrier;
}

/** The trace context a message carries, or undefined. */
export function extractContext(carrier: MsgHdrs | undefined): Context | undefined {
  if (!carrier?.has("traceparent")) return undefined;
  const extracted = propagator.extract(ROOT_CONTEXT, carrier, getter);
  const span = trace.getSpanContext(extracted);
  return span && isSpanContextValid(span) ? extracted : undefined;
}

/** The spans of one batch of consumed events, ended together once the batch is done. */
export interface EventSpans {
  end(error?: unknown): void;
}

/**
 * Spans for a batch of events a consumer handles at once (`<operation> <destination>`, e.g.
 * `settle agn.requests`): one CONSUMER span per traced event, in that event's trace (the request
 * that produced it), and one span for the batch linking every such event, so a trace shows where
 * its event went and the batch shows what it held. Undefined when `nc` is untraced or no event
 * carries trace context.
 */
export function startEventSpans<T>(
  nc: NatsConnection,
  operation: string,
  destination: string,
  items: readonly T[],
  headersOf: (item: T) => MsgHdrs | undefined,
): EventSpans | undefined {
  const tracer = tracerOf(nc);
  if (!tracer) return undefined;
  const parents: SpanContext[] = [];
  for (const item of items) {
    const parent = trace.getSpanContext(extractContext(headersOf(item)) ?? ROOT_CONTEXT);
    if (parent) parents.push(parent);
  }
  if (parents.length === 0) return undefined;
  const name = `${operation} ${destination}`;
  const attributes = {
    ...messaging(destination, "process"),
    "messaging.operation.name": operation,
    "messaging.batch.message_count": items.length,
  };
  const batch = tracer.startSpan(`${name} batch`, {
    kind: SpanKind.CONSUMER,
    attributes,
    links: parents.map((parent) => ({ context: parent })),
    root: true,
  });
  const spans = parents.map((parent) =>
    tracer.startSpan(
      name,
      { kind: SpanKind.CONSUMER, attributes, links: [{ context: batch.spanContext() }] },
      trace.setSpanContext(ROOT_CONTEXT, parent),
    ),
  );
  spans.push(batch);
  return {
    end(error) {
      for (const span of spans) {
        if (error !== undefined) recordError(span, error);
        span.end();
      }
    },
  };
}
