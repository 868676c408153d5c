import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { Dispatcher } from "undici";
import type { ProxyContext } from "../context";
import type { JsonObject } from "../domain/json";
import { JSON_RPC, type JsonRpcRequest, JsonRpcResponse } from "./jsonrpc";

/**
 * The bridge to servers on the older HTTP+SSE transport (MCP 2024-11-05): the client opens a GET
 * event stream, the server names in an `endpoint` event where to POST messages, and answers them
 * on the stream. Such a session lives in one connection of one process, so the gateway does not
 * keep one: every request of a client runs on an upstream session of its own (stream, `initialize`,
 * `notifications/initialized`, the request, its answer, stream closed), and any proxy replica can
 * serve any request. The price is that handshake per request, and what the server sends outside
 * an answer (its own requests are answered "not supported"; notifications are dropped).
 */

/** The parts of a server the bridge reaches it with. */
export interface SseServer {
  name: string;
  url: string;
  skip_tls_verification: boolean;
}

/** The initialize a bridged session opens with when the client's own is not at hand. */
const BRIDGE_INITIALIZE = {
  protocolVersion: "2024-11-05",
  capabilities: {},
  clientInfo: { name: "agentnet-mcp-gateway", version: "1.0.0" },
};

/** A server's answer over the bridge: its initialize result, and its answer to the request sent. */
interface Bridged {
  initialized: JsonObject;
  answer: JsonRpcResponse | undefined;
}

/**
 * Why a bridged exchange failed, with the status the client is answered with and, when the server
 * refused the gateway's request, the status it answered (a 401 tells the gateway its token is spent).
 */
export class BridgeError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly upstreamStatus?: number,
  ) {
    super(message);
    this.name = "BridgeError";
  }
}

/**
 * The server's answer to one request of a client, bridged: `initialize` opens a session with the
 * client's params and is answered with the server's own result; any other request runs on a session
 * the gateway opens for it with its own `initialize`. Throws `BridgeError`.
 *
 * A bridged session holds a connection of the origin's pool for its stream while its messages are
 * posted on others: at most half the origin's connections carry bridged streams (the origin's
 * `bridgedStreams` slots), so their posts always find a connection; a session past that waits for
 * a slot as long as a provider request would, then is answered 503.
 */
export async function bridgeRequest(
  ctx: ProxyContext,
  server: SseServer,
  headers: Record<string, string>,
  message: JsonRpcRequest,
  signal: AbortSignal,
): Promise<JsonRpcResponse | undefined> {
  const { bridgedStreams } = ctx.pools.get(new URL(server.url).origin, server.skip_tls_verification);
  if (!bridgedStreams.tryTake() && !(await bridgedStreams.wait(ctx.pools.waitMs, signal))) {
    if (signal.aborted) throw signal.reason;
    throw new BridgeError(
      503,
      `MCP server ${server.name}: the gateway has as many bridged sessions open to it as it allows; try again`,
    );
  }
  try {
    return await bridgeOnce(ctx, server, headers, message, signal);
  } finally {
    bridgedStreams.release();
  }
}

async function bridgeOnce(
  ctx: ProxyContext,
  server: SseServer,
  headers: Record<string, string>,
  message: JsonRpcRequest,
  signal: AbortSignal,
): Promise<JsonRpcResponse | undefined> {
  if (message.method === "initialize") {
    const opened = await bridgeOverSse(
      ctx,
      server,
      headers,
      undefined,
      message.params ?? BRIDGE_INITIALIZE,
      signal,
    );
    return { jsonrpc: "2.0", id: message.id, result: opened.initialized };
  }
  return (await bridgeOverSse(ctx, server, headers, message, BRIDGE_INITIALIZE, signal)).answer;
}

/**
 * Runs `message` (when given) on a fresh upstream session opened with `initialize`, and awaits its
 * answer, within the time the proxy gives any server's answer (undici's timeouts bound each wait
 * for bytes, not a stream that keeps sending anything but the answer).
 */
async function bridgeOverSse(
  ctx: ProxyContext,
  server: SseServer,
  headers: Record<string, string>,
  message: JsonRpcRequest | undefined,
  initialize: JsonObject,
  signal: AbortSignal,
): Promise<Bridged> {
  const url = new URL(server.url);
  const pool = ctx.pools.get(url.origin, server.skip_tls_verification).pool;
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  signal.addEventListener("abort", onAbort);
  const deadlineMs = ctx.pools.bodyTimeoutMs;
  let pastDeadline = false;
  const deadline = setTimeout(() => {
    pastDeadline = true;
    abort.abort();
  }, deadlineMs);
  let stream: Dispatcher.ResponseData | undefined;
  try {
    stream = await open(pool, url, headers, abort.signal, server.name);
    const events = readEvents(stream, server.name);
    const endpoint = await nextEndpoint(events, url, server.name);
    const post = async (body: object) => {
      const posted = await pool.request({
        method: "POST",
        path: `${endpoint.pathname}${endpoint.search}`,
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: abort.signal,
      });
      await posted.body.dump();
      if (posted.statusCode < 200 || posted.statusCode >= 300) {
        throw new BridgeError(
          502,
          `MCP server ${server.name} refused a message (HTTP ${posted.statusCode})`,
          posted.statusCode,
        );
      }
    };
    const awaitAnswer = async (id: string | number): Promise<JsonRpcResponse> => {
      for (;;) {
        const event = await events.next();
        if (event.done)
          throw new BridgeError(502, `MCP server ${server.name} closed its stream before answering`);
        const parsed = parseJson(event.value.data);
        const response = JsonRpcResponse.safeParse(parsed);
        if (response.success && response.data.id === id) return response.data;
        if (isRequest(parsed)) {
          // The server's own request (sampling, roots, elicitation) has no client to reach here.
          await post({
            jsonrpc: "2.0",
            id: parsed.id,
            error: { code: JSON_RPC.methodNotFound, message: "not relayed by the gateway's HTTP+SSE bridge" },
          });
        }
      }
    };
    const openId = "agentnet-bridge-initialize";
    await post({ jsonrpc: "2.0", id: openId, method: "initialize", params: initialize });
    const opened = await awaitAnswer(openId);
    if (!("result" in opened)) {
      throw new BridgeError(502, `MCP server ${server.name} refused to initialize: ${opened.error.message}`);
    }
    await post({ jsonrpc: "2.0", method: "notifications/initialized" });
    if (!message) return { initialized: opened.result, answer: undefined };
    await post(message);
    return { initialized: opened.result, answer: await awaitAnswer(message.id) };
  } catch (error) {
    if (pastDeadline && !signal.aborted) {
      throw new BridgeError(504, `MCP server ${server.name} did not answer within ${deadlineMs / 1000} s`);
    }
    throw error;
  } finally {
    clearTimeout(deadline);
    signal.removeEventListener("abort", onAbort);
    abort.abort();
    stream?.body.on("error", () => undefined);
  }
}

async function open(
  pool: Dispatcher,
  url: URL,
  headers: Record<string, string>,
  signal: AbortSignal,
  name: string,
): Promise<Dispatcher.ResponseData> {
  const stream = await pool.request({
    method: "GET",
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, accept: "text/event-stream" },
    signal,
  });
  if (stream.statusCode !== 200) {
    await stream.body.dump();
    throw new BridgeError(
      502,
      `MCP server ${name} answered its event stream with HTTP ${stream.statusCode}`,
      stream.statusCode,
    );
  }
  return stream;
}

/** The most a bridged session's stream is read: an endless event must not grow the proxy's memory. */
const MAX_STREAM_BYTES = 16 * 1024 * 1024;

/** The stream's events, parsed as they arrive (a character split across chunks kept whole). */
async function* readEvents(
  stream: Dispatcher.ResponseData,
  name: string,
): AsyncGenerator<EventSourceMessage, void, undefined> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => queue.push(event) });
  const decoder = new TextDecoder();
  let read = 0;
  for await (const chunk of stream.body as AsyncIterable<Buffer>) {
    read += chunk.length;
    if (read > MAX_STREAM_BYTES)
      throw new BridgeError(502, `MCP server ${name} sent more than ${MAX_STREAM_BYTES} bytes`);
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) {
      const event = queue.shift();
      if (event) yield event;
    }
  }
  if (queue.length === 0) return;
  throw new BridgeError(502, `MCP server ${name} ended its stream mid-event`);
}

/**
 * Where the server takes messages (its first `endpoint` event), on its own origin only: the
 * server's credential must not follow a URL the server names elsewhere.
 */
async function nextEndpoint(
  events: AsyncGenerator<EventSourceMessage, void, undefined>,
  base: URL,
  name: string,
): Promise<URL> {
  for (;;) {
    const event = await events.next();
    if (event.done)
      throw new BridgeError(502, `MCP server ${name} closed its stream before naming its endpoint`);
    if (event.value.event !== "endpoint") continue;
    let endpoint: URL;
    try {
      endpoint = new URL(event.value.data.trim(), base);
    } catch {
      throw new BridgeError(502, `MCP server ${name} named an endpoint that is not a URL`);
    }
    if (endpoint.origin !== base.origin) {
      throw new BridgeError(502, `MCP server ${name} named an endpoint on another origin`);
    }
    return endpoint;
  }
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const isRequest = (value: unknown): value is { id: string | number; method: string } =>
  typeof value === "object" &&
  value !== null &&
  "method" in value &&
  "id" in value &&
  (typeof value.id === "string" || typeof value.id === "number");
