import type { IncomingHttpHeaders } from "node:http";
import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type TextMapGetter,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

const propagator = new W3CTraceContextPropagator();
const getter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

/**
 * The trace a client's `traceparent` continues (a load balancer or an instrumented client), or the
 * root context: the HTTP services' spans are its children then.
 */
export const clientTraceContext = (headers: IncomingHttpHeaders): Context =>
  headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, headers, getter);

/** Ends an HTTP SERVER span with its answer's status: a 5xx fails it, a 4xx is an answer like any other. */
export function endHttpSpan(span: Span, status: number): void {
  span.setAttribute("http.response.status_code", status);
  if (status >= 500) {
    span.setAttribute("error.type", String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
