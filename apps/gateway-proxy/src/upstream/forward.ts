import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { Pool } from "undici";
import { isJsonObject } from "../domain/json";
import type { Wire } from "../domain/wire";
import { SseWatcher } from "./sse";
import { completionText, readUsage, type UsageCounts, zeroUsage } from "./usage";

/** Largest non-streaming response body kept to read its usage; bigger ones pass through unread. */
const MAX_PARSED_BODY_BYTES = 16 * 1024 * 1024;

/** Hop-by-hop headers (RFC 9110 §7.6.1) and ones the proxy sets itself never cross it. */
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
]);

/** Caller headers not forwarded: the caller's own credentials, and what undici computes itself. */
const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  "host",
  "authorization",
  "x-api-key",
  "content-length",
  "accept-encoding",
  "expect",
]);

/** The caller's headers minus credentials and hop-by-hop ones, plus the proxy's own. */
export function upstreamHeaders(incoming: IncomingHttpHeaders, own: Record<string, string>) {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = value;
  }
  // identity: usage is read from the body, which a compressed answer would hide.
  headers["accept-encoding"] = "identity";
  for (const [name, value] of Object.entries(own)) headers[name.toLowerCase()] = value;
  return headers;
}

export interface ForwardRequest {
  pool: Pool;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: string | undefined;
  wire: Wire;
  /** Characters of answer text to keep for prompt capture; 0 keeps none. */
  captureLimit: number;
}

export type ForwardResult =
  | {
      outcome: "answered" | "aborted";
      status: number;
      usage: UsageCounts;
      completion: string;
      stream: boolean;
      /** SSE data events relayed (0 for a JSON answer). */
      streamedEvents: number;
    }
  | { outcome: "unreachable"; error: unknown };

/** Status recorded when the client went away first (nginx's convention: no HTTP status fits). */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * Sends the request upstream and relays the answer chunk by chunk as it arrives, reading usage on
 * the way (SSE events, or the JSON body once complete). The client closing its connection aborts
 * the upstream request. Nothing is written to `res` when the upstream cannot be reached: the
 * caller answers that in the vendor's error shape.
 */
export async function forward(request: ForwardRequest, res: ServerResponse): Promise<ForwardResult> {
  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.once("close", onClose);
  let status = 0;
  let stream = false;
  let watcher: SseWatcher | undefined;
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    const upstream = await request.pool.request({
      method: request.method === "GET" ? "GET" : "POST",
      path: request.path,
      headers: request.headers,
      body: request.body,
      signal: abort.signal,
    });
    status = upstream.statusCode;
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    const contentType = String(upstream.headers["content-type"] ?? "");
    stream = contentType.includes("text/event-stream");
    if (stream) watcher = new SseWatcher(request.wire, request.captureLimit);
    res.writeHead(status, headers);
    if (stream) res.flushHeaders();
    for await (const chunk of upstream.body) {
      const buffer = chunk as Buffer;
      if (watcher) watcher.push(buffer);
      else if (bytes + buffer.length <= MAX_PARSED_BODY_BYTES) chunks.push(buffer);
      bytes += buffer.length;
      if (!res.write(buffer)) await drained(res, abort.signal);
    }
    res.end();
  } catch (error) {
    if (status === 0 && !abort.signal.aborted) return { outcome: "unreachable", error };
    if (!res.writableEnded) res.destroy();
    return {
      outcome: "aborted",
      status: CLIENT_CLOSED_STATUS,
      ...read(watcher, chunks, bytes, request),
      stream,
    };
  } finally {
    res.off("close", onClose);
  }
  return { outcome: "answered", status, ...read(watcher, chunks, bytes, request), stream };
}

function read(watcher: SseWatcher | undefined, chunks: Buffer[], bytes: number, request: ForwardRequest) {
  if (watcher) {
    watcher.end();
    return { usage: watcher.usage, completion: watcher.completion(), streamedEvents: watcher.events };
  }
  const nothing = { usage: zeroUsage(), completion: "", streamedEvents: 0 };
  if (bytes === 0 || bytes > MAX_PARSED_BODY_BYTES) return nothing;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return nothing;
  }
  const usage = isJsonObject(body) ? readUsage(body.usage, request.wire) : zeroUsage();
  const completion = request.captureLimit > 0 ? completionText(body).slice(0, request.captureLimit) : "";
  return { usage, completion, streamedEvents: 0 };
}

/** Waits for the client to take more (backpressure), or gives up when the request is aborted. */
function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    res.once("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}
