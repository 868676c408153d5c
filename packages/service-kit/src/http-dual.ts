import { type IncomingMessage, Server } from "node:http";
import {
  constants,
  createServer as createHttp2Server,
  type Http2Server,
  type Http2Session,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from "node:http2";
import type { Socket } from "node:net";
import { type HttpServerLimits, http1ServerOptions, reportDrops } from "./http";
import { abortBody, Http2Answer, Http2Request, type HttpHandler } from "./http2-compat";
import type { Logger } from "./logger";

/*
 * One port, HTTP/1.1 and HTTP/2 over cleartext with prior knowledge (h2c, RFC 9113 §3.3): the AWS
 * SDK's default handler speaks only HTTP/2 to an http:// endpoint. TLS, and with it ALPN, ends at
 * the load balancer in front, so a connection's first bytes are all there is to tell by: HTTP/2's
 * starts with its preface, `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`, and no HTTP/1.1 request starts with
 * `PRI `.
 *
 * The listening server is the hardened HTTP/1.1 server itself (`createHttpServer`'s settings, its
 * connection cap and drop log, its header, request and keep-alive timeouts), so HTTP/1.1 is served
 * exactly as before: every connection is accepted and counted there, its first bytes read and put
 * back, then handed to that server's own connection handler or to an `node:http2` server that
 * never listens. The HTTP/2 side gets the same bounds from a sweep every second: a connection
 * silent past the header timeout is closed, an HTTP/2 session without streams past the header
 * timeout (none yet) or the keep-alive timeout (after one) is sent GOAWAY and closed, and a request
 * whose body is not in within the request timeout is answered 408 and reset. A stream answered in
 * full while its body is still coming (a 413) is reset with NO_ERROR, so its client stops sending.
 */

/** Streams one HTTP/2 session may have open at once: what nginx allows, enough for a busy SDK client. */
export const HTTP2_MAX_CONCURRENT_STREAMS = 128;

/**
 * Megabytes one HTTP/2 session may hold (header tables, data queued to send); past it new streams
 * are refused. 128 streams at their 64 KiB receive window and a queued answer chunk fit.
 */
const HTTP2_MAX_SESSION_MEMORY_MB = 32;

/** How often the HTTP/2 bounds and silent connections are checked, as node checks HTTP/1.1's. */
const SWEEP_INTERVAL_MS = 1_000;

/** A session sent GOAWAY that has not closed its connection this long after is cut. */
const GOAWAY_GRACE_MS = 1_000;

const PREFACE_START = Buffer.from("PRI ");

/**
 * "h2" when `head` starts HTTP/2's connection preface, "http/1.1" as soon as it cannot, undefined
 * while it is too short to tell (fewer than 4 bytes, all of them the preface's).
 */
export function protocolOf(head: Uint8Array): "h2" | "http/1.1" | undefined {
  const known = Math.min(head.length, PREFACE_START.length);
  for (let i = 0; i < known; i++) if (head[i] !== PREFACE_START[i]) return "http/1.1";
  return head.length >= PREFACE_START.length ? "h2" : undefined;
}

/** One HTTP/2 connection: its socket, its session, and how long it has had no stream open. */
interface Http2Connection {
  socket: Socket;
  session: ServerHttp2Session | undefined;
  open: number;
  /** Since when no stream is open (the connection's start until its first stream). */
  idleSince: number;
  /** A stream was opened: idle, it gets the keep-alive timeout, not the header timeout. */
  served: boolean;
  /** When it was sent GOAWAY (0: not yet). */
  goneAwayAt: number;
}

/**
 * The services' HTTP server (`createHttpServer`) speaking HTTP/2 with prior knowledge beside
 * HTTP/1.1 on the same port, under the same bounds. `close()` sends GOAWAY to HTTP/2 sessions (their
 * open streams finish), `closeIdleConnections()` closes idle ones of both protocols and
 * `closeAllConnections()` cuts every connection, as for HTTP/1.1 alone.
 */
export function createDualHttpServer(handler: HttpHandler, limits: HttpServerLimits, logger: Logger): Server {
  const server = new DualHttpServer(handler, limits);
  reportDrops(server, limits, logger);
  return server;
}

class DualHttpServer extends Server {
  readonly #limits: HttpServerLimits;
  readonly #http1Connection: (socket: Socket) => void;
  readonly #http2: Http2Server<typeof IncomingMessage, never, typeof Http2Request, typeof Http2Answer>;
  /** Connections whose protocol is not known yet, by when they were accepted. */
  readonly #undecided = new Map<Socket, number>();
  readonly #http2Connections = new Map<Http2Session, Http2Connection>();
  /** The HTTP/2 connection being handed over: its session is made while it is. */
  #arriving: Http2Connection | undefined;
  /** HTTP/2 requests whose body may still be coming, by when their headers came. */
  readonly #receiving = new Map<Http2Request, number>();
  #sweep: NodeJS.Timeout | undefined;

  constructor(handler: HttpHandler, limits: HttpServerLimits) {
    super(http1ServerOptions(limits), (req, res) => {
      res.setHeader("x-content-type-options", "nosniff");
      handler(req, res);
    });
    this.#limits = limits;
    this.maxConnections = limits.maxConnections;
    // node's HTTP/1.1 server takes its connections through its one 'connection' listener, which
    // also serves connections emitted by users; it gets those found to be HTTP/1.1.
    const [http1Connection, ...others] = this.listeners("connection");
    if (!http1Connection || others.length > 0)
      throw new Error("node:http's server changed how it takes connections");
    this.#http1Connection = http1Connection as (socket: Socket) => void;
    this.removeAllListeners("connection");
    this.on("connection", (socket: Socket) => this.#accept(socket));

    this.#http2 = createHttp2Server(
      {
        settings: { maxConcurrentStreams: HTTP2_MAX_CONCURRENT_STREAMS },
        maxSessionMemory: HTTP2_MAX_SESSION_MEMORY_MB,
        Http2ServerRequest: Http2Request,
        Http2ServerResponse: Http2Answer,
      },
      (req, res) => {
        res.setHeader("x-content-type-options", "nosniff");
        if (!req.stream.endAfterHeaders) {
          this.#receiving.set(req, Date.now());
          req.stream.once("finish", stopSending);
        }
        handler(req, res);
      },
    );
    this.#http2.on("session", (session) => this.#opened(session));
    this.#http2.on("stream", (stream) => this.#streamOpened(stream));
    this.on("listening", () => {
      clearInterval(this.#sweep);
      this.#sweep = setInterval(() => this.#check(), SWEEP_INTERVAL_MS).unref();
    });
    this.on("close", () => clearInterval(this.#sweep));
  }

  override close(callback?: (error?: Error) => void): this {
    super.close(callback);
    for (const connection of this.#http2Connections.values()) this.#goAway(connection);
    return this;
  }

  override closeIdleConnections(): void {
    super.closeIdleConnections();
    for (const socket of this.#undecided.keys()) socket.destroy();
    for (const connection of this.#http2Connections.values())
      if (connection.open === 0) this.#goAway(connection);
  }

  override closeAllConnections(): void {
    super.closeAllConnections();
    for (const socket of this.#undecided.keys()) socket.destroy();
    for (const connection of this.#http2Connections.values()) cut(connection);
  }

  /** Reads a connection's first bytes, puts them back, and hands it to the server of its protocol. */
  #accept(socket: Socket): void {
    this.#undecided.set(socket, Date.now());
    let head: Buffer | undefined;
    const firstBytes = (chunk: Buffer) => {
      head = head === undefined ? chunk : Buffer.concat([head, chunk]);
      const protocol = protocolOf(head);
      if (protocol === undefined) return;
      socket.off("data", firstBytes);
      socket.off("error", destroyQuietly);
      this.#undecided.delete(socket);
      socket.pause();
      socket.unshift(head);
      if (protocol === "h2") {
        this.#handToHttp2(socket);
        return;
      }
      this.#http1Connection.call(this, socket);
      // The HTTP/1.1 parser reads what comes next from the socket itself; the bytes put back
      // reach it as the socket flows again.
      socket.resume();
    };
    socket.on("data", firstBytes);
    socket.on("error", destroyQuietly);
  }

  #handToHttp2(socket: Socket): void {
    // HTTP/2 ends the connection when its client ends it (node's HTTP/1.1 server keeps it half open).
    socket.allowHalfOpen = false;
    const connection: Http2Connection = {
      socket,
      session: undefined,
      open: 0,
      idleSince: Date.now(),
      served: false,
      goneAwayAt: 0,
    };
    // The session reads the bytes put back from the socket's buffer (node does so for sockets that
    // carried data before); it is made while the connection is emitted.
    this.#arriving = connection;
    this.#http2.emit("connection", socket);
    this.#arriving = undefined;
    const { session } = connection;
    if (!session) {
      socket.destroy();
      return;
    }
    this.#http2Connections.set(session, connection);
    socket.once("close", () => this.#http2Connections.delete(session));
  }

  #opened(session: ServerHttp2Session): void {
    if (this.#arriving) this.#arriving.session = session;
  }

  #streamOpened(stream: ServerHttp2Stream): void {
    const connection = stream.session && this.#http2Connections.get(stream.session);
    if (!connection) return;
    connection.open++;
    connection.served = true;
    stream.once("close", () => {
      connection.open--;
      connection.idleSince = Date.now();
    });
  }

  #goAway(connection: Http2Connection): void {
    if (connection.goneAwayAt !== 0) return;
    connection.goneAwayAt = Date.now();
    // Open streams finish; the session closes once none is left (at once when none is).
    connection.session?.close();
  }

  /** The bounds node's HTTP/1.1 server checks every second, for what it does not see. */
  #check(): void {
    const now = Date.now();
    const { headersTimeoutMs, keepAliveTimeoutMs, requestTimeoutMs } = this.#limits;
    for (const [socket, acceptedAt] of this.#undecided) {
      if (socket.destroyed) this.#undecided.delete(socket);
      else if (now - acceptedAt >= headersTimeoutMs) socket.destroy();
    }
    for (const connection of this.#http2Connections.values()) {
      if (connection.goneAwayAt !== 0) {
        // A client that neither opens a stream nor closes after GOAWAY holds nothing of ours long.
        if (connection.open === 0 && now - connection.goneAwayAt >= GOAWAY_GRACE_MS) cut(connection);
        continue;
      }
      const idleFor = connection.served ? keepAliveTimeoutMs : headersTimeoutMs;
      if (connection.open === 0 && now - connection.idleSince >= idleFor) this.#goAway(connection);
    }
    for (const [req, arrivedAt] of this.#receiving) {
      if (req.complete) this.#receiving.delete(req);
      else if (now - arrivedAt >= requestTimeoutMs) {
        this.#receiving.delete(req);
        // The client may have sent it all while the handler has not read it yet.
        if (!req.stream.state.remoteClose) timeOut(req);
      }
    }
  }
}

/** A request not in within the request timeout: 408 when nothing was answered yet, then reset. */
function timeOut(req: Http2Request): void {
  const { stream } = req;
  abortBody.call(req);
  if (stream.destroyed || stream.closed) return;
  if (!stream.headersSent)
    stream.respond({ ":status": 408, "x-content-type-options": "nosniff" }, { endStream: true });
  stopReceiving(stream);
}

/**
 * An answer sent in full while its client is still sending the body (a 413 at the body limit): a
 * reset with NO_ERROR tells the client to stop (RFC 9113 §8.1), where HTTP/1.1 reads the rest and
 * drops it. node does so itself only for a body the handler never began to read.
 */
function stopSending(this: ServerHttp2Stream): void {
  if (!this.closed && !this.destroyed && !this.state.remoteClose) stopReceiving(this);
}

/**
 * Resets a stream with NO_ERROR, after a whole answer: its client stops sending (RFC 9113 §8.1).
 * What of the body is buffered unread, or comes before the reset lands, is dropped: a stream paused
 * on unread data never ends, and its session stops reading the connection.
 */
function stopReceiving(stream: ServerHttp2Stream): void {
  stream.removeAllListeners("data");
  stream.resume();
  stream.close(constants.NGHTTP2_NO_ERROR);
}

function cut(connection: Http2Connection): void {
  connection.session?.destroy();
  connection.socket.destroy();
}

function destroyQuietly(this: Socket): void {
  this.destroy();
}
