import { setImmediate as yieldToLoop } from "node:timers/promises";
import { ACCOUNT_EVENTS_STREAM, ALERTS_STREAM, AlertSubjects, REQUESTS_STREAM } from "@agentnet/contracts";
import {
  AckPolicy,
  type Consumer,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { errors, headers, type NatsConnection } from "@nats-io/transport-node";
import type { SpanContext } from "@opentelemetry/api";
import { ackedPublisherOf } from "./acked-publish";
import { streamReplicasOf } from "./connect";
import { encodeText, maxPayloadOf, UnpublishableMessage } from "./payload";
import { traceHeaders } from "./trace-context";

/** JetStream's durations are nanoseconds. */
export const nanos = (ms: number) => ms * 1_000_000;
export const millis = (ns: number) => ns / 1_000_000;

interface StreamSpec {
  name: string;
  subjects: string[];
  maxAgeMs: number;
  /** Beyond it the oldest messages go (discard old), so the server's storage never fills up. */
  maxBytes?: number;
  /** A retried publish with the same Nats-Msg-Id inside this window is stored once. */
  duplicateWindowMs?: number;
}

/**
 * Creates the stream, or brings an existing one to `spec`. File storage, so a NATS restart loses
 * nothing; kept on `streamReplicasOf(nc)` servers, so a cluster keeps it through the loss of a
 * minority of its nodes. A stream made with other replicas is brought to these (JetStream copies
 * it to the new peers, or drops the extra ones, while it keeps serving).
 */
async function ensureStream(nc: NatsConnection, spec: StreamSpec) {
  const config = {
    name: spec.name,
    subjects: spec.subjects,
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: streamReplicasOf(nc),
    max_age: nanos(spec.maxAgeMs),
    ...(spec.maxBytes === undefined ? {} : { max_bytes: spec.maxBytes, discard: DiscardPolicy.Old }),
    duplicate_window: nanos(spec.duplicateWindowMs ?? DEFAULT_REQUEST_STREAM_LIMITS.duplicateWindowMs),
  };
  await patiently(async () => {
    // In here: making the manager asks JetStream too (its API check), as slow as the rest to answer.
    const jsm = await jetstreamManager(nc);
    const exists = await streamExists(jsm, spec.name);
    await (exists ? jsm.streams.update(spec.name, config) : jsm.streams.add(config)).catch(
      (error: unknown) => {
        throw withReplicas(error, spec.name, config.num_replicas);
      },
    );
  });
}

/**
 * How long a service's start waits for JetStream to take a stream or consumer: a cluster electing
 * its leaders (nodes started beside the services, a node just lost, a busy host) times out or
 * answers 503 for seconds, and a service that gave up then would die for what passes by itself.
 */
const JETSTREAM_START_PATIENCE_MS = 60_000;

/** Runs `work` again while JetStream has not answered yet (`answersLater`), within the patience. */
export async function patiently<T>(work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + JETSTREAM_START_PATIENCE_MS;
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 4_000)) {
    try {
      return await work();
    } catch (error) {
      if (!answersLater(error) || Date.now() + delayMs > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/**
 * JetStream's "no suitable peers for placement": on a cluster just started (or that just lost a
 * node), the meta leader places a stream only on peers it has heard from since, and on a busy host
 * a service can ask first. A single server refuses replicas with another code, at once.
 */
const NO_PEERS_FOR_PLACEMENT = 10_005;

/**
 * A timeout, no responder, JetStream's 503 (no leader, no quorum yet) or peers not known yet,
 * however deep the cause.
 */
function answersLater(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    if (cause instanceof errors.TimeoutError || cause instanceof errors.NoRespondersError) return true;
    if (
      cause instanceof JetStreamApiError &&
      (cause.status === 503 || cause.code === NO_PEERS_FOR_PLACEMENT)
    ) {
      return true;
    }
    cause = cause.cause;
  }
  return false;
}

/**
 * A stream the server refused to create or change, with the replicas asked for: the commonest
 * cause is `AGN_STREAM_REPLICAS` above what the NATS deployment has (more than 1 on a single server,
 * more than its nodes on a cluster), which the server's own words do not name.
 */
export function withReplicas(error: unknown, stream: string, replicas: number): unknown {
  if (!(error instanceof JetStreamApiError)) return error;
  return new Error(
    `NATS refused stream ${stream} on ${replicas} server(s) (AGN_STREAM_REPLICAS=${replicas}): ${error.message}`,
    { cause: error },
  );
}

/** Whether `name` exists; any other failure (no JetStream quorum, a timeout) is thrown, never taken for "no". */
async function streamExists(jsm: JetStreamManager, name: string): Promise<boolean> {
  try {
    await jsm.streams.info(name);
    return true;
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return false;
    throw error;
  }
}

const DAY_MS = 24 * 3600 * 1000;

/** What the services ensuring the request stream must agree on (else each start would set its own). */
export interface RequestStreamLimits {
  /**
   * Past it the oldest events go. The default, at ~1 KB an event, is about ten million events:
   * days of traffic at hundreds of requests a second. `agentnet up` derives one from the disk.
   */
  maxBytes: number;
  /**
   * An event published again with the same Nats-Msg-Id (the request id) within this is stored
   * once: a proxy whose ack was lost in a NATS outage retries it after the outage. Consumption
   * remembers settled event ids at least as long. Each id costs the server about 100 bytes.
   */
  duplicateWindowMs: number;
}

export const DEFAULT_REQUEST_STREAM_LIMITS: RequestStreamLimits = {
  maxBytes: 10 * 1024 ** 3,
  duplicateWindowMs: 2 * 60 * 1000,
};

/**
 * Gateway request events, kept a week (a consumer that was down catches up) within `maxBytes`:
 * past it the oldest events go, so a full disk never stops publishing. A consumer down longer than
 * the stream holds loses what was discarded (the proxy's status and telemetry's lag say so).
 */
export const ensureRequestStream = (
  nc: NatsConnection,
  subjects = ["agn.requests.>"],
  limits: Partial<RequestStreamLimits> = {},
) =>
  ensureStream(nc, {
    name: REQUESTS_STREAM,
    subjects,
    maxAgeMs: 7 * DAY_MS,
    ...DEFAULT_REQUEST_STREAM_LIMITS,
    ...limits,
  });

/** Account lifecycle events, kept 30 days. */
export const ensureAccountEventsStream = (nc: NatsConnection) =>
  ensureStream(nc, { name: ACCOUNT_EVENTS_STREAM, subjects: ["agn.account.>"], maxAgeMs: 30 * DAY_MS });

/**
 * Alerts waiting for their webhook delivery (budget crossings, refused credentials): each is
 * acked once delivered or given up on, within about ten minutes; a week and 256 MiB bound what
 * a notifier that is down for long leaves behind.
 */
export const ensureAlertsStream = (nc: NatsConnection) =>
  ensureStream(nc, {
    name: ALERTS_STREAM,
    subjects: [AlertSubjects.all],
    maxAgeMs: 7 * DAY_MS,
    maxBytes: 256 * 1024 ** 2,
  });

export interface DurableConsumerOptions {
  /** The consumer's durable name: each service has its own and resumes where it stopped. */
  durable: string;
  stream?: string;
  /** Defaults to the whole stream; a narrower subject lets a test read only its own accounts. */
  filterSubject?: string;
  /** "all" replays the stream (a new production consumer catches up); "new" starts at creation. */
  deliver?: "all" | "new";
  ackWaitMs?: number;
  maxAckPending?: number;
  /** Removes the consumer after this long without a client: for throwaway (test, bench) consumers. */
  inactiveThresholdMs?: number;
}

/** A durable pull consumer with explicit acks, created or updated to `options`. */
export async function ensureDurableConsumer(
  nc: NatsConnection,
  options: DurableConsumerOptions,
): Promise<Consumer> {
  const stream = options.stream ?? REQUESTS_STREAM;
  return await patiently(async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add(stream, {
      durable_name: options.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: options.deliver === "new" ? DeliverPolicy.New : DeliverPolicy.All,
      ack_wait: nanos(options.ackWaitMs ?? 30_000),
      max_ack_pending: options.maxAckPending ?? 20_000,
      ...(options.filterSubject === undefined ? {} : { filter_subject: options.filterSubject }),
      ...(options.inactiveThresholdMs === undefined
        ? {}
        : { inactive_threshold: nanos(options.inactiveThresholdMs) }),
    });
    return (await jetstream(nc)).consumers.get(stream, options.durable);
  });
}

/** Deletes a durable consumer (tests and benchmarks clean up theirs). */
export async function deleteDurableConsumer(nc: NatsConnection, durable: string, stream = REQUESTS_STREAM) {
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.delete(stream, durable);
}

/** Room left in max_payload for the headers of an event (its Nats-Msg-Id, its trace context). */
const EVENT_HEADER_BYTES = 512;

/** The most an event's JSON may take to be published on `nc`. */
export const maxEventBytes = (nc: NatsConnection): number => maxPayloadOf(nc) - EVENT_HEADER_BYTES;

/**
 * Publishes an event once: JetStream drops a second publish with the same id inside the window.
 * An event the bus can never carry (larger than max_payload, or refused by the server as
 * malformed) rejects with `UnpublishableMessage`, so a caller does not retry it forever; anything
 * else (no connection, no JetStream, a timeout) is worth retrying. `trace`, the span of the request
 * the event tells of, goes along in its headers: its consumers' spans join that request's trace.
 */
export async function publishEvent(
  nc: NatsConnection,
  subject: string,
  event: unknown,
  msgId: string,
  trace?: SpanContext,
) {
  const body = encodeText(JSON.stringify(event));
  const limit = maxEventBytes(nc);
  if (body.length > limit) {
    throw new UnpublishableMessage(`event of ${body.length} bytes exceeds the bus's ${limit}`, limit);
  }
  try {
    const header = trace ? traceHeaders(trace) : headers();
    header.set("Nats-Msg-Id", msgId);
    return await ackedPublisherOf(nc).publish(subject, body, header);
  } catch (error) {
    throw refusedForGood(error, limit) ?? error;
  }
}

/**
 * nats.js refusing the message itself, or the stream refusing it as a bad request (too large for
 * the stream, a malformed header): the same message fails again. A missing stream (404), a busy
 * (429) or failing (5xx) server may take it later.
 */
function refusedForGood(error: unknown, limit: number): UnpublishableMessage | undefined {
  if (error instanceof errors.InvalidArgumentError) {
    return new UnpublishableMessage(error.message, limit, { cause: error });
  }
  if (error instanceof JetStreamApiError && (error.status === 400 || error.status === 413)) {
    return new UnpublishableMessage(error.message, undefined, { cause: error });
  }
  return undefined;
}

export type BatchHandler = (messages: JsMsg[]) => Promise<void>;

/** Items handled between two yields of `forEachInSlices`: about 1 ms of decoding events. */
const SLICE = 16;

/**
 * Calls `handle` on each item, yielding to the event loop after every slice of them. A service
 * that answers requests on the same loop as it works through a batch (consumption decides
 * reservations while it settles a thousand events) would otherwise hold every reply behind the
 * whole batch (p99 of reservations with settling traffic: 52 ms, 26–42 ms in slices).
 */
export async function forEachInSlices<T>(items: readonly T[], handle: (item: T) => void): Promise<void> {
  for (let start = 0; start < items.length; start += SLICE) {
    if (start > 0) await yieldToLoop();
    for (const item of items.slice(start, start + SLICE)) handle(item);
  }
}

/**
 * Pulls batches and hands each to `handle`; every message of a batch is acked only after the
 * handler resolved, so a crash between insert and ack means redelivery, never loss.
 * Resolves when `signal` aborts and the batch in hand is done.
 */
export async function consumeBatches(
  consumer: Consumer,
  handle: BatchHandler,
  options: {
    maxMessages?: number;
    expiresMs?: number;
    signal?: AbortSignal;
    onError?: (error: unknown) => void;
  } = {},
): Promise<void> {
  const maxMessages = options.maxMessages ?? 1_000;
  while (!options.signal?.aborted) {
    const batch: JsMsg[] = [];
    try {
      const iterator = await consumer.fetch({
        max_messages: maxMessages,
        expires: options.expiresMs ?? 1_000,
      });
      for await (const message of iterator) batch.push(message);
    } catch (error) {
      // A pull can fail (missed heartbeats on a stalled event loop, a reconnect): report it and go
      // on with what arrived; anything not acked is redelivered after ack_wait anyway.
      options.onError?.(error);
      if (batch.length === 0) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    if (batch.length === 0) continue;
    try {
      await handle(batch);
      await forEachInSlices(batch, (message) => message.ack());
    } catch (error) {
      options.onError?.(error);
      await forEachInSlices(batch, (message) => message.nak(1_000));
    }
  }
}
