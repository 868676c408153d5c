import {
  AppError,
  type Endpoint,
  ErrorEnvelope,
  invalidInput,
  type ReplyOf,
  type RequestOf,
} from "@agentnet/contracts";
import type { Msg, MsgHdrs, NatsConnection, Subscription } from "@nats-io/transport-node";
import { errors } from "@nats-io/transport-node";
import { z } from "zod";
import { busMetricsOf } from "./metrics";
import { encodeText, maxPayloadOf, tooLargeToCarry } from "./payload";
import { tracerOf, withClientSpan, withServerSpan } from "./trace-context";

/** What travels back on a reply subject: the reply, or the one error envelope. */
const ReplyEnvelope = z.union([
  z.object({ ok: z.literal(true), data: z.unknown() }),
  z.object({ ok: z.literal(false), error: ErrorEnvelope }),
]);

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

export interface ServeOptions {
  queue: string;
  /** Called with errors that are not AppErrors, so the service can log them with context. */
  onUnexpectedError?: (error: unknown, subject: string) => void;
}

export type Handler<E extends Endpoint> = (
  request: z.output<E["request"]>,
  msg: Msg,
) => Promise<z.input<E["reply"]>> | z.input<E["reply"]>;

/**
 * Answers an endpoint in a queue group. The request is validated against the contract before the
 * handler runs and the reply is parsed on the way out, so fields outside the contract (a sealed
 * key, a mongoose `_id`) can never leave the service. A reply larger than the server carries is
 * answered 413 instead; answering never throws (the caller then waits into its timeout).
 */
export function serve<E extends Endpoint>(
  nc: NatsConnection,
  endpoint: E,
  handler: Handler<E>,
  options: ServeOptions,
): Subscription {
  const tracer = tracerOf(nc);
  return nc.subscribe(endpoint.subject, {
    queue: options.queue,
    callback: (error, msg) => {
      if (error) {
        options.onUnexpectedError?.(error, endpoint.subject);
        return;
      }
      if (tracer) void withServerSpan(tracer, msg, () => answer(nc, endpoint, handler, msg, options));
      else void answer(nc, endpoint, handler, msg, options);
    },
  });
}

async function answer<E extends Endpoint>(
  nc: NatsConnection,
  endpoint: E,
  handler: Handler<E>,
  msg: Msg,
  options: ServeOptions,
) {
  const started = performance.now();
  let envelope: z.infer<typeof ReplyEnvelope>;
  try {
    const parsed = endpoint.request.safeParse(decode(msg));
    if (!parsed.success) throw invalidInput(parsed.error);
    const result = await handler(parsed.data as z.output<E["request"]>, msg);
    envelope = { ok: true, data: endpoint.reply.parse(result) };
  } catch (error) {
    if (error instanceof AppError) {
      envelope = { ok: false, error: error.toEnvelope() };
    } else {
      options.onUnexpectedError?.(error, endpoint.subject);
      envelope = { ok: false, error: { status: 500, code: "internal", message: "internal error" } };
    }
  }
  if (msg.reply) respond(nc, endpoint.subject, msg, envelope, options);
  busMetricsOf(nc)?.answered(endpoint.subject, started, envelope);
  return envelope;
}

function respond(
  nc: NatsConnection,
  subject: string,
  msg: Msg,
  envelope: z.infer<typeof ReplyEnvelope>,
  options: ServeOptions,
) {
  try {
    let body = encodeText(JSON.stringify(envelope));
    const limit = maxPayloadOf(nc);
    if (body.length > limit) {
      const tooLarge = tooLargeToCarry(`the answer of ${subject}`, body.length, limit);
      options.onUnexpectedError?.(tooLarge, subject);
      body = encodeText(JSON.stringify({ ok: false, error: tooLarge.toEnvelope() }));
    }
    msg.respond(body);
  } catch (error) {
    // A closed or draining connection, a reply that cannot be serialised: the caller times out.
    options.onUnexpectedError?.(error, subject);
  }
}

function decode(msg: Msg): unknown {
  if (msg.data.length === 0) return {};
  try {
    return msg.json();
  } catch {
    throw new AppError(400, "bad_request", "message is not JSON");
  }
}

/**
 * Calls an endpoint and returns its parsed reply. A service's error envelope is rethrown as the
 * same AppError; nobody listening is 503 and no answer in time is 504, so callers see one family.
 */
export function request<E extends Endpoint>(
  nc: NatsConnection,
  endpoint: E,
  payload: RequestOf<E>,
  options: { timeoutMs?: number } = {},
): Promise<ReplyOf<E>> {
  const started = performance.now();
  const tracer = tracerOf(nc);
  const reply = tracer
    ? withClientSpan(tracer, endpoint.subject, (headers) => send(nc, endpoint, payload, options, headers))
    : send(nc, endpoint, payload, options);
  return busMetricsOf(nc)?.requested(endpoint.subject, started, reply) ?? reply;
}

async function send<E extends Endpoint>(
  nc: NatsConnection,
  endpoint: E,
  payload: RequestOf<E>,
  options: { timeoutMs?: number },
  headers?: MsgHdrs,
): Promise<ReplyOf<E>> {
  const body = encodeText(JSON.stringify(payload));
  const limit = maxPayloadOf(nc);
  if (body.length > limit) throw tooLargeToCarry(`the request to ${endpoint.subject}`, body.length, limit);
  let msg: Msg;
  try {
    const timeout = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    msg = await nc.request(endpoint.subject, body, headers ? { timeout, headers } : { timeout });
  } catch (error) {
    throw transportError(error, endpoint.subject);
  }
  const envelope = ReplyEnvelope.parse(msg.json());
  if (!envelope.ok) throw AppError.fromEnvelope(envelope.error);
  return endpoint.reply.parse(envelope.data) as ReplyOf<E>;
}

function transportError(error: unknown, subject: string): unknown {
  const noResponders =
    error instanceof errors.NoRespondersError ||
    (error instanceof errors.RequestError && error.isNoResponders());
  if (noResponders) return new AppError(503, "service_unavailable", `no service answers ${subject}`);
  if (
    error instanceof errors.TimeoutError ||
    (error instanceof Error && error.cause instanceof errors.TimeoutError)
  ) {
    return new AppError(504, "service_timeout", `no answer on ${subject} in time`);
  }
  return error;
}
