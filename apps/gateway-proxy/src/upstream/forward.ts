import type { Readable } from "node:stream";
import type { HttpAnswer } from "@agentnet/service-kit";
import type { Pool } from "undici";
import { isJsonObject } from "../domain/json";
import { isRetryableStatus } from "../domain/retry";
import { eachChunk } from "../each-chunk";
import { type Restream, restreamed } from "../wires/restream";
import { StreamWatcher } from "../wires/stream-watcher";
import { answeringModel, completionText, type UsageCounts, zeroUsage } from "../wires/usage";
import type { AnswerHeaders, Framing, Wire } from "../wires/wire";
import { type Abortable, Cancellation, onAbort } from "./cancellation";

/** Largest non-streaming response body kept to read its usage; bigger ones pass through unread. */
const MAX_PARSED_BODY_BYTES = 16 * 1024 * 1024;

/** What of a failed answer's body is kept to relay should it be the last (vendors' errors are small), or of one reshaped. */
const MAX_KEPT_BODY_BYTES = 64 * 1024;

/** Hop-by-hop headers (RFC 9110 §7.6.1) of the vendor's answer concern the proxy's connection only. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  // HTTP/2's upgrade settings: connection-specific, and refused by HTTP/2's writeHead.
  "http2-settings",
]);

export interface ForwardRequest {
  pool: Pool;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: string | Buffer | undefined;
  wire: Wire;
  /** How the vendor's stream becomes the wire's, when it frames its events otherwise. */
  restream: Restream | undefined;
  /** Characters of answer text to keep for prompt capture; 0 keeps none. */
  captureLimit: number;
  /** A capped stream: its hold grows with its output, and it ends when the hold cannot grow. */
  growth?: StreamGrowth;
  /**
   * Another attempt may follow: a retryable status is not relayed but returned, and a stream's
   * headers wait for its first byte, so a stream that dies before it can be tried elsewhere.
   */
  mayRetry: boolean;
}

/** How a capped stream's hold follows its output. */
export interface StreamGrowth {
  /** Output tokens at which the hold must grow: some way before it is used up, so a cut lands within it. */
  extendAt(): number;
  /** Adds one step to the hold; false when a cap refuses it. */
  extend(): Promise<boolean>;
}

export type ForwardResult =
  | {
      /**
       * "cut": a capped stream was ended by the proxy at the cap, in the vendor's format.
       * "aborted": the answer did not complete: the client left (499), or the vendor's answer broke
       * off (502; a stream then ends with the vendor's error event where one can follow).
       */
      outcome: "answered" | "aborted" | "cut";
      status: number;
      usage: UsageCounts;
      completion: string;
      stream: boolean;
      /** The model the vendor says answered, when it said (traces report it). */
      responseModel: string | undefined;
      /**
       * Output tokens a stream generated as far as the proxy can tell (0 for a JSON answer); counted
       * on demand, since only an answer that did not complete needs it.
       */
      streamedOutputTokens: () => number;
      /** When the upstream's answer headers came (`performance.now()`); 0 when they never did. */
      headersAt: number;
    }
  | { outcome: "unreachable"; error: unknown }
  | UpstreamFailure;

/** A failure another attempt may mend, nothing of it relayed (only when `mayRetry`). */
export interface UpstreamFailure {
  outcome: "retryable";
  /** The vendor's status; 0 when the stream died before its first byte. */
  status: number;
  /** Why, when there is no status. */
  error: string;
  headers: Record<string, string | string[]>;
  /** The vendor's error body (its first 64 KiB), to relay should no other attempt follow. */
  body: Buffer;
}

/** Status recorded when the vendor's answer broke off after it began. */
const BAD_GATEWAY = 502;

/** What a stream that broke off tells its client, in the vendor's error event. */
const STREAM_BROKE_OFF = "The upstream provider's stream broke off before it ended.";

/** Status recorded when the client went away first (nginx's convention: no HTTP status fits). */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * Sends the request upstream and relays the answer chunk by chunk as it arrives, reading usage on
 * the way (SSE events, or the JSON body once complete). The client closing its connection aborts
 * the upstream request. Nothing is written to `res` when the upstream cannot be reached: the
 * caller answers that in the vendor's error shape.
 */
export async function forward(request: ForwardRequest, res: HttpAnswer): Promise<ForwardResult> {
  const abort = new Cancellation();
  const onClose = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.once("close", onClose);
  let status = 0;
  let headersAt = 0;
  let stream = false;
  let watcher: StreamWatcher | undefined;
  const chunks: Buffer[] = [];
  let bytes = 0;
  let answerHeaders: AnswerHeaders = {};
  /** A capped stream the proxy ended at the cap. */
  let cut = false;
  try {
    const upstream = await request.pool.request({
      method: request.method === "GET" ? "GET" : "POST",
      path: request.path,
      headers: request.headers,
      body: request.body,
      signal: abort,
      // Lets HTTP/2 carry several of these POSTs on one connection (undici runs a non-idempotent
      // request alone on its connection); over HTTP/1.1 a connection carries one request anyway,
      // and undici retries nothing either way.
      idempotent: true,
    });
    status = upstream.statusCode;
    headersAt = performance.now();
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    answerHeaders = headers;
    if (request.mayRetry && isRetryableStatus(status)) {
      return { outcome: "retryable", status, error: "", headers, body: await firstBytes(upstream.body) };
    }
    const contentType = String(upstream.headers["content-type"] ?? "");
    const { framing } = request.wire.stream;
    const { restream } = request;
    const restreaming = restream?.from.carries(contentType) === true;
    stream = restreaming || framing.carries(contentType);
    let body: AsyncIterable<unknown> = upstream.body;
    let firstBytesHere = upstream.body.readableLength > 0;
    if (stream && request.mayRetry) {
      // The answer is the client's only once a byte of it came: until then another attempt may go.
      const parts = upstream.body[Symbol.asyncIterator]();
      let first: IteratorResult<unknown>;
      try {
        first = await parts.next();
      } catch (error) {
        if (abort.aborted) throw error;
        return { outcome: "retryable", status: 0, error: STREAM_FAILED_EARLY, headers, body: EMPTY };
      }
      body = startingWith(first, parts);
      firstBytesHere = true;
    }
    if (restreaming) {
      body = restreamed(body, restream);
      headers["content-type"] = restream.contentType;
      delete headers["content-length"];
    } else if (restream?.json && !stream && status < 300) {
      const reshapedAnswer = await reshaped(upstream.body, res, status, headers, restream.json, request);
      return { ...reshapedAnswer, headersAt };
    }
    if (stream)
      watcher = new StreamWatcher(request.wire.stream, request.captureLimit, request.growth !== undefined);
    res.writeHead(status, headers);
    // A stream's headers go out at once, so its client knows the answer began before its first
    // event. When the upstream's first bytes came with its headers (nearly always), they go out
    // together in the relay's first write instead: one write to the socket fewer per stream.
    if (stream && (restreaming || !firstBytesHere)) res.flushHeaders();
    if (watcher && request.growth && status < 400) {
      cut = await relayGrowing(body, res, framing, watcher, request.growth, abort);
      if (cut) abort.abort();
      else res.end();
    } else {
      const read = (chunk: Buffer) => {
        if (watcher) watcher.push(chunk);
        else if (bytes + chunk.length <= MAX_PARSED_BODY_BYTES) chunks.push(chunk);
        bytes += chunk.length;
      };
      if (body === upstream.body) await relayReadable(upstream.body, res, read, abort);
      else {
        for await (const chunk of body) {
          const buffer = chunk as Buffer;
          read(buffer);
          if (!res.write(buffer)) await drained(res, abort);
        }
      }
      res.end();
    }
  } catch (error) {
    if (status === 0 && !abort.aborted) return { outcome: "unreachable", error };
    // Not aborted: the client is still there, and the vendor's answer broke off.
    const upstreamBroke = !abort.aborted;
    if (upstreamBroke && watcher && !watcher.midEvent && !res.writableEnded && !res.destroyed)
      res.end(watcher.broken(STREAM_BROKE_OFF));
    else if (!res.writableEnded) res.destroy();
    return {
      outcome: "aborted",
      status: upstreamBroke ? BAD_GATEWAY : CLIENT_CLOSED_STATUS,
      ...readAnswer(watcher, chunks, bytes, answerHeaders, request),
      stream,
      headersAt,
    };
  } finally {
    res.off("close", onClose);
  }
  return {
    outcome: cut ? "cut" : "answered",
    status,
    ...readAnswer(watcher, chunks, bytes, answerHeaders, request),
    stream,
    headersAt,
  };
}

/** A whole JSON answer (small: a token count, its first 64 KiB) reshaped for the caller's wire, then relayed. */
async function reshaped(
  body: AsyncIterable<unknown>,
  res: HttpAnswer,
  status: number,
  headers: Record<string, string | string[]>,
  reshape: (answer: unknown) => unknown,
  request: ForwardRequest,
) {
  const text = (await firstBytes(body)).toString("utf8");
  let answer: unknown;
  try {
    answer = reshape(JSON.parse(text));
  } catch {
    answer = undefined;
  }
  const payload = answer === undefined ? text : JSON.stringify(answer);
  delete headers["content-length"];
  res.writeHead(status, headers);
  res.end(payload);
  const relayed = Buffer.from(payload);
  return {
    outcome: "answered" as const,
    status,
    ...readAnswer(undefined, [relayed], relayed.length, headers, request),
    stream: false,
  };
}

/**
 * What a finished (or interrupted) stream reports: the vendor's usage as far as it came, and the
 * output it streamed (a token per data event, or the delta-text estimate, whichever is more).
 */
export function streamUsage(watcher: StreamWatcher) {
  watcher.end();
  const streamedOutputTokens = () => Math.max(watcher.events, watcher.outputTokens());
  return {
    usage: watcher.usage,
    completion: watcher.completion(),
    streamedOutputTokens,
    responseModel: watcher.model,
  };
}

const noOutput = () => 0;

function readAnswer(
  watcher: StreamWatcher | undefined,
  chunks: Buffer[],
  bytes: number,
  headers: AnswerHeaders,
  request: ForwardRequest,
) {
  if (watcher) return streamUsage(watcher);
  const nothing = {
    usage: zeroUsage(),
    completion: "",
    streamedOutputTokens: noOutput,
    responseModel: undefined,
  };
  if (bytes === 0 || bytes > MAX_PARSED_BODY_BYTES) return nothing;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return nothing;
  }
  const usage = request.wire.answerUsage(body, headers);
  const answers = Array.isArray(body) ? body : [body];
  const completion =
    request.captureLimit > 0 ? answers.map(completionText).join("").slice(0, request.captureLimit) : "";
  const last = answers[answers.length - 1];
  const responseModel = isJsonObject(last) ? answeringModel(last) : undefined;
  return { usage, completion, streamedOutputTokens: noOutput, responseModel };
}

/**
 * Relays the vendor's answer as it comes, each chunk `read` first, until it ends; rejects as a
 * `for await` over it would throw. Paused while the client's socket is full, until it drains or
 * the client leaves (`signal`): then the rest is read and dropped, as `drained` lets a loop go on.
 */
async function relayReadable(
  body: Readable,
  res: HttpAnswer,
  read: (chunk: Buffer) => void,
  signal: Cancellation,
): Promise<void> {
  let stopWaiting: (() => void) | undefined;
  const onDrained = () => {
    if (stopWaiting === undefined) return;
    res.off("drain", onDrained);
    stopWaiting();
    stopWaiting = undefined;
    body.resume();
  };
  const relay = (chunk: Buffer) => {
    // Destroyed (the client left): what was buffered is dropped, as a `for await` stops reading.
    if (body.destroyed) return;
    read(chunk);
    if (res.write(chunk) || stopWaiting !== undefined || signal.aborted) return;
    body.pause();
    res.once("drain", onDrained);
    stopWaiting = onAbort(signal, onDrained);
  };
  try {
    await eachChunk(body, relay, CLOSED_BEFORE_END);
  } catch (error) {
    // Thrown while relaying a chunk: the upstream request ends, as a `for await` that throws ends it.
    if (!body.destroyed) {
      body.on("error", ignore);
      body.destroy(error as Error);
    }
    throw error;
  } finally {
    onDrained();
  }
}

const CLOSED_BEFORE_END = "the upstream answer closed before its end";

const ignore = () => undefined;

/**
 * Relays a capped stream event by event (whole events only, so it can end cleanly between two),
 * growing the hold before the output passes it. Returns true when it ended the stream at the cap:
 * the vendor-format ending is written and the response ended.
 */
async function relayGrowing(
  body: AsyncIterable<unknown>,
  res: HttpAnswer,
  framing: Framing,
  watcher: StreamWatcher,
  growth: StreamGrowth,
  signal: Cancellation,
): Promise<boolean> {
  // Bytes, not text: the relay writes what the upstream sent without decoding and encoding it.
  let pending: Buffer = NOTHING_PENDING;
  // Awaits only when the hold must grow or the client pushes back: an await per chunk was a
  // measurable part of what a capped stream cost beyond a plain one.
  for await (const chunk of body) {
    pending = pending.length === 0 ? (chunk as Buffer) : Buffer.concat([pending, chunk as Buffer]);
    const boundary = framing.lastEventEnd(pending);
    if (boundary === -1) continue;
    const whole = boundary === pending.length;
    const events = whole ? pending : pending.subarray(0, boundary);
    pending = whole ? NOTHING_PENDING : pending.subarray(boundary);
    if (watcher.mayReach(growth.extendAt(), events.length)) {
      // Near where the hold must grow, the events go one by one, so a cut falls between two of
      // them: a fast upstream's network chunk may hold thousands of tokens.
      if (await relayEventByEvent(events, res, framing, watcher, growth)) return true;
    } else {
      watcher.push(events);
      res.write(events);
    }
    // Asked after growing: the client may have taken everything meanwhile ('drain' already fired).
    if (res.writableNeedDrain) await drained(res, signal);
  }
  if (pending.length === 0) return false;
  watcher.push(pending);
  res.write(pending);
  return cutAtCap(res, watcher, growth);
}

/** Relays whole events one at a time, growing the hold between them; true when it cut the stream. */
async function relayEventByEvent(
  events: Buffer,
  res: HttpAnswer,
  framing: Framing,
  watcher: StreamWatcher,
  growth: StreamGrowth,
): Promise<boolean> {
  for (let start = 0; start < events.length; ) {
    const end = framing.nextEventEnd(events, start);
    const event = events.subarray(start, end);
    watcher.push(event);
    res.write(event);
    if (watcher.reached(growth.extendAt()) && (await cutAtCap(res, watcher, growth))) return true;
    start = end;
  }
  return false;
}

/** Grows the hold past what streamed; true when a cap refused it and the ending is written. */
async function cutAtCap(res: HttpAnswer, watcher: StreamWatcher, growth: StreamGrowth): Promise<boolean> {
  while (watcher.reached(growth.extendAt())) {
    if (!(await growth.extend())) {
      res.end(watcher.ending());
      return true;
    }
  }
  return false;
}

const NOTHING_PENDING = Buffer.alloc(0);
const EMPTY = Buffer.alloc(0);

/** The `error` of an attempt whose stream died after its headers, before its first byte. */
export const STREAM_FAILED_EARLY = "stream_failed_before_first_byte";

/** The body again, its first chunk already read: no await more per chunk than the body's own. */
function startingWith(first: IteratorResult<unknown>, rest: AsyncIterator<unknown>): AsyncIterable<unknown> {
  let pending: IteratorResult<unknown> | undefined = first;
  const iterator: AsyncIterator<unknown> = {
    next: () => {
      if (!pending) return rest.next();
      const result = pending;
      pending = undefined;
      return Promise.resolve(result);
    },
    return: (value?: unknown) => rest.return?.(value) ?? Promise.resolve({ done: true, value }),
  };
  return { [Symbol.asyncIterator]: () => iterator };
}

/**
 * An answer's body as far as it is kept (a failed one's, to relay should it be the last); a body
 * that breaks off is kept as far as it came.
 */
async function firstBytes(body: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      if (bytes < MAX_KEPT_BODY_BYTES) chunks.push(buffer.subarray(0, MAX_KEPT_BODY_BYTES - bytes));
      bytes += buffer.length;
    }
  } catch {
    // What came is what there is to relay.
  }
  return Buffer.concat(chunks);
}
/** Waits for the client to take more (backpressure), or gives up when the request is aborted. */
export function drained(res: HttpAnswer, signal: Abortable): Promise<void> {
  // Aborted already (the client left before the write that filled its buffer): no 'abort' comes.
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      stopListening();
      resolve();
    };
    res.once("drain", done);
    const stopListening = onAbort(signal, done);
  });
}
