import type { Caller, GatewayMcpServer, Policy } from "@agentnet/contracts";
import type { McpServerReach } from "@agentnet/gateway-rules";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import type { Dispatcher } from "undici";
import type { ProxyContext } from "../context";
import type { JsonObject } from "../domain/json";
import { BodyNotUtf8, BodyTooLarge, readBody } from "../http/body";
import { sendJson } from "../http/errors";
import type { AccountView } from "../snapshot/cache";
import { drained } from "../upstream/forward";
import { privateUpstreamOf } from "../upstream/pools";
import { type CallerCredential, noteServerStatus } from "./credentials";
import {
  type ClientMessage,
  errorResponse,
  JSON_RPC,
  type JsonRpcId,
  type JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  joinedRequestId,
  parseClientMessage,
} from "./jsonrpc";
import { type McpSessionOwner, sealSessionId } from "./session-token";
import { SseEventRewriter } from "./sse";
import { BridgeError, bridgeRequest } from "./sse-bridge";

/** Headers of a client's request the server needs; everything else (the agentnet token first) stays here. */
const FORWARDED_HEADERS = ["accept", "content-type", "mcp-protocol-version", "last-event-id"] as const;

/** The largest JSON answer read whole (to see or rewrite one message of it); a larger one passes unread. */
const MAX_READ_ANSWER_BYTES = 16 * 1024 * 1024;

/** Whether undici gave up waiting on the server (for its headers, its body, or a connection). */
const isTimeout = (error: unknown): boolean => {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (
      code === "UND_ERR_HEADERS_TIMEOUT" ||
      code === "UND_ERR_BODY_TIMEOUT" ||
      code === "UND_ERR_CONNECT_TIMEOUT"
    )
      return true;
    cause = cause.cause;
  }
  return false;
};

/** Status of a call whose client went away before its answer ended (nginx's "client closed request"). */
export const CLIENT_CLOSED = 499;

/** The server an MCP request goes to, with the caller's grants of it and their credential for it. */
export interface Target {
  view: AccountView;
  server: GatewayMcpServer;
  reach: McpServerReach<GatewayMcpServer, Policy>;
  credential: CallerCredential;
}

/** One client request on its way to the server. */
export interface Relay {
  ctx: ProxyContext;
  req: HttpRequest;
  res: HttpAnswer;
  caller: Caller;
  target: Target;
  owner: McpSessionOwner;
  /** The session as the client named it (sealed) and as the server knows it; both absent before one. */
  session: { sealed: string; upstream: string } | undefined;
  /**
   * On `/mcp`, where several servers are joined: the server's place in the client's session (its
   * requests to the client carry it in their ids) and the protocol version it agreed to, which may
   * be older than the one the client and the gateway speak.
   */
  joined?: { index: number; protocolVersion: string };
}

/** What the relay does with the server's answer to one request of the client's (by its id). */
export interface AnswerWatch {
  id: JsonRpcId;
  /** A new result for that answer (a tool list's granted part); undefined sends it as it is. */
  rewrite?: (result: JsonObject) => JsonObject | undefined;
  /** Told that answer as the client gets it. */
  seen?: (answer: JsonRpcResponse) => void;
}

/** How a relayed request ended: the status the client got and the bytes of the answer's body. */
export interface RelayOutcome {
  status: number;
  bytes: number;
}

export const headerOf = (req: HttpRequest, name: string): string | undefined => {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === "" ? undefined : first;
};

/**
 * The one JSON-RPC message a client POSTed, with its text, or undefined after answering why there is
 * none: a body past the proxy's bound (413), not UTF-8 or not JSON-RPC (400, a JSON-RPC error).
 */
export async function readClientMessage(
  ctx: ProxyContext,
  req: HttpRequest,
  res: HttpAnswer,
): Promise<{ text: string; parsed: ClientMessage } | undefined> {
  let text: string;
  try {
    ({ text } = await readBody(req, ctx.options.bodyLimitBytes));
  } catch (error) {
    if (error instanceof BodyTooLarge) {
      answerError(res, 413, null, JSON_RPC.invalidRequest, "request body too large");
      return undefined;
    }
    if (error instanceof BodyNotUtf8) {
      answerError(res, 400, null, JSON_RPC.parseError, "the request body is not valid UTF-8");
      return undefined;
    }
    throw error;
  }
  const parsed = parseClientMessage(text);
  if (!("kind" in parsed)) {
    answerError(res, 400, parsed.id, parsed.code, parsed.message);
    return undefined;
  }
  return { text, parsed };
}

/** Answers a JSON-RPC error the gateway decided; the bytes of its body. */
export function answerError(
  res: HttpAnswer,
  status: number,
  id: JsonRpcId | null,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  data?: unknown,
): number {
  const body = errorResponse(id, code, message, data);
  sendJson(res, status, body, headers);
  return Buffer.byteLength(JSON.stringify(body));
}

/**
 * Sends the request on to the server and its answer back as it streams, the watched answer seen
 * and rewritten on its way.
 */
export async function forward(
  relay: Relay,
  request: { method: string; body: string | undefined; watch?: AnswerWatch },
): Promise<RelayOutcome> {
  if (relay.target.server.transport === "sse") return forwardOverSse(relay, request);
  const { ctx, req, res, target } = relay;
  const url = new URL(target.server.url);
  const forwarded: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = headerOf(req, name);
    if (value !== undefined) forwarded[name] = value;
  }
  if (relay.joined) forwarded["mcp-protocol-version"] = relay.joined.protocolVersion;
  const headers = serverHeaders(target, relay.session?.upstream, forwarded);

  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.on("close", onClose);
  try {
    let upstream: Dispatcher.ResponseData;
    try {
      upstream = await ctx.pools.get(url.origin, target.server.skip_tls_verification).pool.request({
        method: request.method as Dispatcher.HttpMethod,
        path: `${url.pathname}${url.search}`,
        headers,
        body: request.body ?? null,
        signal: abort.signal,
        // A GET stream may stay quiet for long: it ends when the client or the server closes it.
        ...(request.method === "GET" ? { bodyTimeout: 0 } : {}),
      });
    } catch (error) {
      if (abort.signal.aborted) return { status: CLIENT_CLOSED, bytes: 0 };
      const refused = privateUpstreamOf(error);
      const timedOut = isTimeout(error);
      const reason = refused
        ? `it is refused (${refused.message})`
        : timedOut
          ? "it did not answer in time"
          : "it cannot be reached";
      ctx.logger.warn({ server: target.server.id, err: error }, "MCP server unreachable");
      const status = timedOut ? 504 : 502;
      const message = `MCP server ${target.server.name}: ${reason}`;
      return {
        status,
        bytes: answerError(res, status, request.watch?.id ?? null, JSON_RPC.gatewayRefusal, message),
      };
    }
    noteServerStatus(ctx, target.server, upstream.statusCode);
    const sent = { status: upstream.statusCode, bytes: 0 };
    try {
      await answer(relay, upstream, request.watch, sent, abort.signal);
    } catch (error) {
      if (abort.signal.aborted) return { status: CLIENT_CLOSED, bytes: sent.bytes };
      ctx.logger.warn({ server: target.server.id, err: error }, "MCP answer cut");
      const status = isTimeout(error) ? 504 : 502;
      if (res.headersSent) res.destroy();
      else {
        const message = `MCP server ${target.server.name} broke off its answer`;
        sent.bytes = answerError(res, status, request.watch?.id ?? null, JSON_RPC.gatewayRefusal, message);
      }
      return { status, bytes: sent.bytes };
    }
    return sent;
  } finally {
    res.off("close", onClose);
  }
}

/**
 * `forward` to a server on the HTTP+SSE transport, through the bridge (sse-bridge.ts): a request is
 * run on an upstream session of its own and answered as JSON; `initialize` is answered with the
 * server's own result; notifications and answers of the client are accepted and dropped (each
 * bridged session ends with its request); there is no GET stream.
 */
async function forwardOverSse(
  relay: Relay,
  request: { method: string; body: string | undefined; watch?: AnswerWatch },
): Promise<RelayOutcome> {
  const { ctx, res, target } = relay;
  if (request.method === "GET") {
    const message = `MCP server ${target.server.name} speaks the HTTP+SSE transport, which the gateway bridges request by request: there is no event stream of its own`;
    return {
      status: 405,
      bytes: answerError(res, 405, null, JSON_RPC.invalidRequest, message, { allow: "POST, DELETE" }),
    };
  }
  const parsed = request.body === undefined ? undefined : parseClientMessage(request.body);
  if (!parsed || !("kind" in parsed) || parsed.kind !== "request") {
    res.writeHead(request.method === "DELETE" ? 200 : 202);
    res.end();
    return { status: request.method === "DELETE" ? 200 : 202, bytes: 0 };
  }
  const message = parsed.message;
  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.on("close", onClose);
  try {
    const answer = await bridged(ctx, target, message, abort.signal);
    const text = JSON.stringify(answer);
    const answered = watched(text, request.watch, undefined) ?? text;
    const sessionHeader: Record<string, string> =
      relay.joined && relay.session ? { "mcp-session-id": relay.session.sealed } : {};
    const bytes = Buffer.byteLength(answered);
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": String(bytes),
      ...sessionHeader,
    });
    res.end(answered);
    return { status: 200, bytes };
  } catch (error) {
    if (abort.signal.aborted) return { status: CLIENT_CLOSED, bytes: 0 };
    ctx.logger.warn({ server: target.server.id, err: error }, "MCP HTTP+SSE bridge failed");
    const status = error instanceof BridgeError ? error.status : isTimeout(error) ? 504 : 502;
    const reason =
      error instanceof BridgeError
        ? error.message
        : `MCP server ${target.server.name}: ${isTimeout(error) ? "it did not answer in time" : "it cannot be reached"}`;
    return { status, bytes: answerError(res, status, message.id, JSON_RPC.gatewayRefusal, reason) };
  } finally {
    res.off("close", onClose);
  }
}

/** Relays the server's answer: its status and the headers MCP defines, its session id sealed. */
async function answer(
  relay: Relay,
  upstream: Dispatcher.ResponseData,
  watch: AnswerWatch | undefined,
  sent: RelayOutcome,
  signal: AbortSignal,
): Promise<void> {
  const { ctx, res, owner } = relay;
  const headers: Record<string, string> = {};
  const contentType = String(upstream.headers["content-type"] ?? "");
  if (contentType) headers["content-type"] = contentType;
  const session = upstream.headers["mcp-session-id"];
  if (relay.joined) {
    // The client's session joins several servers' sessions: it stays as the client has it.
    if (relay.session) headers["mcp-session-id"] = relay.session.sealed;
  } else if (typeof session === "string" && session !== "") {
    // The client's own token while the session is the same: a new seal per answer would change it.
    headers["mcp-session-id"] =
      session === relay.session?.upstream
        ? relay.session.sealed
        : sealSessionId(ctx.sealingKey, owner, session);
  }
  // As fast as the client reads: a slow client holds the server back, not the proxy's memory.
  const write = async (chunk: string | Buffer) => {
    if (chunk.length === 0) return;
    sent.bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
    if (!res.write(chunk)) await drained(res, signal);
  };
  const body = upstream.body as AsyncIterable<Buffer>;
  if (contentType.includes("text/event-stream")) {
    headers["cache-control"] = "no-cache";
    res.writeHead(upstream.statusCode, headers);
    res.flushHeaders?.();
    const joined = relay.joined?.index;
    const rewriter =
      watch || joined !== undefined
        ? new SseEventRewriter((data) => watched(data, watch, joined))
        : undefined;
    for await (const chunk of body) await write(rewriter ? rewriter.push(chunk) : chunk);
    if (rewriter) await write(rewriter.end());
    res.end();
    return;
  }
  if (watch && contentType.includes("application/json")) {
    // Read whole to see (and maybe rewrite) the one answer, up to a bound; past it, passed on unread.
    const chunks: Buffer[] = [];
    let size = 0;
    const iterator = body[Symbol.asyncIterator]();
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      chunks.push(next.value);
      size += next.value.length;
      if (size > MAX_READ_ANSWER_BYTES) {
        res.writeHead(upstream.statusCode, headers);
        for (const chunk of chunks) await write(chunk);
        for (let rest = await iterator.next(); !rest.done; rest = await iterator.next())
          await write(rest.value);
        res.end();
        return;
      }
    }
    const text = Buffer.concat(chunks).toString("utf8");
    const answered = watched(text, watch, undefined) ?? text;
    sent.bytes = Buffer.byteLength(answered);
    res.writeHead(upstream.statusCode, { ...headers, "content-length": String(sent.bytes) });
    res.end(answered);
    return;
  }
  res.writeHead(upstream.statusCode, headers);
  for await (const chunk of body) await write(chunk);
  res.end();
}

/**
 * A message of the server's answer, as the client is to get it: the watched answer rewritten when
 * the watch rewrites it, and on `/mcp` (`joined`, the server's place) a request of the server's
 * with an id that names the server, so the client's answer finds its way back (undefined: as the
 * server sent it).
 */
function watched(
  data: string,
  watch: AnswerWatch | undefined,
  joined: number | undefined,
): string | undefined {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (joined !== undefined) {
    const request = JsonRpcRequest.safeParse(message);
    if (request.success)
      return JSON.stringify({ ...request.data, id: joinedRequestId(joined, request.data.id) });
  }
  const parsed = JsonRpcResponse.safeParse(message);
  if (!watch || !parsed.success || parsed.data.id !== watch.id) return undefined;
  const result = "result" in parsed.data && watch.rewrite ? watch.rewrite(parsed.data.result) : undefined;
  const answer = result ? { ...parsed.data, result } : parsed.data;
  watch.seen?.(answer);
  return result ? JSON.stringify(answer) : undefined;
}

/**
 * `exchange` with a server on the HTTP+SSE transport: a request runs on a bridged session of its
 * own; a notification (or a DELETE) has no session to reach, so nothing is sent.
 */
async function exchangeOverSse(
  ctx: ProxyContext,
  target: Pick<Target, "server" | "credential">,
  message: JsonRpcRequest | JsonRpcNotification | undefined,
  signal: AbortSignal,
): Promise<Exchanged> {
  if (!message || !("id" in message)) return { status: 202, session: undefined, answer: undefined };
  const answer = await bridged(ctx, target, message, signal);
  return { status: 200, session: undefined, answer };
}

/** One request answered over the HTTP+SSE bridge, the server's refusal of the gateway's token noted. */
async function bridged(
  ctx: ProxyContext,
  target: Pick<Target, "server" | "credential">,
  message: JsonRpcRequest,
  signal: AbortSignal,
): Promise<JsonRpcResponse | undefined> {
  try {
    return await bridgeRequest(ctx, target.server, serverHeaders(target, undefined, {}), message, signal);
  } catch (error) {
    if (error instanceof BridgeError && error.upstreamStatus !== undefined) {
      noteServerStatus(ctx, target.server, error.upstreamStatus);
    }
    throw error;
  }
}

/** What every request to a server carries: the client's protocol headers, the server's session and credential. */
function serverHeaders(
  target: Pick<Target, "credential">,
  upstreamSession: string | undefined,
  forwarded: Record<string, string>,
): Record<string, string> {
  const headers: Record<string, string> = { "user-agent": "agentnet-mcp-gateway", ...forwarded };
  if (upstreamSession !== undefined) headers["mcp-session-id"] = upstreamSession;
  const { credential } = target;
  if (typeof credential === "object" && "header" in credential) {
    headers[credential.header.toLowerCase()] = credential.value;
  }
  return headers;
}

/** What a server answered one message the gateway sent it on its own (`exchange`). */
export interface Exchanged {
  status: number;
  /** The session id it named, if any. */
  session: string | undefined;
  /** Its answer to the message, when the message was a request and the answer came. */
  answer: JsonRpcResponse | undefined;
}

/**
 * Sends one message to a server and reads its answer whole, whether JSON or an event stream (the
 * answer to the message's id; anything else in the stream is dropped): how `/mcp` joins several
 * servers, asking each the same (initialize, tools/list) or telling each (notifications, DELETE).
 * Throws when the server cannot be reached, the answer is cut, or `signal` (the client gone) aborts.
 */
export async function exchange(
  ctx: ProxyContext,
  target: Pick<Target, "server" | "credential">,
  request: {
    method: "POST" | "DELETE";
    message?: JsonRpcRequest | JsonRpcNotification;
    upstreamSession: string | undefined;
    protocolVersion: string | undefined;
    signal: AbortSignal;
  },
): Promise<Exchanged> {
  if (target.server.transport === "sse") {
    return exchangeOverSse(ctx, target, request.message, request.signal);
  }
  const url = new URL(target.server.url);
  const forwarded: Record<string, string> = {
    accept: "application/json, text/event-stream",
    ...(request.message ? { "content-type": "application/json" } : {}),
    ...(request.protocolVersion ? { "mcp-protocol-version": request.protocolVersion } : {}),
  };
  const upstream = await ctx.pools.get(url.origin, target.server.skip_tls_verification).pool.request({
    method: request.method,
    path: `${url.pathname}${url.search}`,
    headers: serverHeaders(target, request.upstreamSession, forwarded),
    body: request.message ? JSON.stringify(request.message) : null,
    signal: request.signal,
  });
  noteServerStatus(ctx, target.server, upstream.statusCode);
  const session = upstream.headers["mcp-session-id"];
  const exchanged: Exchanged = {
    status: upstream.statusCode,
    session: typeof session === "string" && session !== "" ? session : undefined,
    answer: undefined,
  };
  const id = request.message && "id" in request.message ? request.message.id : undefined;
  const take = (data: string) => {
    if (id === undefined || exchanged.answer) return undefined;
    try {
      const parsed = JsonRpcResponse.safeParse(JSON.parse(data));
      if (parsed.success && parsed.data.id === id) exchanged.answer = parsed.data;
    } catch {
      // Not JSON: not the answer.
    }
    return undefined;
  };
  const contentType = String(upstream.headers["content-type"] ?? "");
  const reader = contentType.includes("text/event-stream") ? new SseEventRewriter(take) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_READ_ANSWER_BYTES) throw new Error(`the answer of ${target.server.name} is too large`);
    if (!reader) chunks.push(chunk);
    else {
      reader.push(chunk);
      // A stream may stay open after the answer (a server's own requests): the answer is all we read.
      if (exchanged.answer) break;
    }
  }
  if (!reader && contentType.includes("application/json")) take(Buffer.concat(chunks).toString("utf8"));
  return exchanged;
}
