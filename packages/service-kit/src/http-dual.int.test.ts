import type { Server } from "node:http";
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect as connectHttp2,
  constants,
} from "node:http2";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_HTTP_SERVER_LIMITS, type HttpServerLimits } from "./http";
import { createDualHttpServer, protocolOf } from "./http-dual";
import type { HttpAnswer, HttpRequest } from "./http2-compat";
import { createLogger } from "./logger";

const servers: Server[] = [];
const sessions: ClientHttp2Session[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) session.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** What the server's handler saw of its requests, and why a request's body read failed. */
interface Seen {
  requests: { method: string; url: string; host: string | undefined; version: string; bytes: number }[];
  readErrors: string[];
}

/**
 * A dual server that answers each request's method, path and body size once it read the body;
 * `/stream?ms=N` streams for N ms (a chunk every 100 ms), `/wait` answers once `release()` is called,
 * `/limit` answers 413 once 1 KiB of the body came.
 */
async function serve(limits: Partial<HttpServerLimits> = {}) {
  const seen: Seen = { requests: [], readErrors: [] };
  const waiting: (() => void)[] = [];
  const handler = async (req: HttpRequest, res: HttpAnswer) => {
    const url = req.url ?? "/";
    let bytes = 0;
    if (url === "/limit") {
      // Answers once 1 KiB of the body came, reading no more of it (a body-size limit).
      for await (const chunk of req) {
        bytes += (chunk as Buffer).length;
        if (bytes > 1024) break;
      }
      res.writeHead(413, { "content-type": "text/plain" });
      res.end("too large");
      return;
    }
    try {
      for await (const chunk of req) bytes += (chunk as Buffer).length;
    } catch (error) {
      seen.readErrors.push((error as { code?: string }).code ?? String(error));
      return;
    }
    seen.requests.push({
      method: req.method ?? "",
      url,
      host: req.headers.host,
      version: req.httpVersion,
      bytes,
    });
    if (url === "/wait") await new Promise<void>((release) => waiting.push(release));
    // A relayed answer whose upstream sent a single-value header twice.
    if (url === "/twice") {
      res.writeHead(200, { "content-type": ["text/plain", "text/html"], "x-many": ["a", "b"] });
      res.end("twice");
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" });
    const ms = Number(new URL(url, "http://x").searchParams.get("ms") ?? 0);
    if (ms === 0) {
      res.end(`${req.method} ${url} ${bytes}`);
      return;
    }
    res.flushHeaders();
    const started = Date.now();
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer);
      res.write("chunk\n");
      if (Date.now() - started < ms) return;
      clearInterval(timer);
      res.end("done");
    }, 100);
  };
  const server = createDualHttpServer(
    (req, res) => void handler(req, res),
    { ...DEFAULT_HTTP_SERVER_LIMITS, ...limits },
    createLogger("http-dual-test", "silent"),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const release = () => {
    for (const wake of waiting.splice(0)) wake();
  };
  return { server, port, seen, release, waiting };
}

function h2Session(port: number): ClientHttp2Session {
  const session = connectHttp2(`http://127.0.0.1:${port}`);
  session.on("error", () => undefined);
  sessions.push(session);
  return session;
}

/** An HTTP/2 request's answer: status, headers and body (or the stream's error, when it broke). */
function h2Request(session: ClientHttp2Session, path: string, body?: string) {
  const stream = session.request({ ":method": body === undefined ? "GET" : "POST", ":path": path });
  stream.end(body);
  return { stream, answer: answerOf(stream) };
}

function answerOf(stream: ClientHttp2Stream) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string; error?: string }>(
    (resolve) => {
      let status = 0;
      let headers: Record<string, unknown> = {};
      let body = "";
      stream.on("response", (received) => {
        headers = received;
        status = Number(received[":status"]);
      });
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        body += chunk;
      });
      stream.on("error", (error: Error & { code?: string }) =>
        resolve({ status, headers, body, error: error.code }),
      );
      stream.on("close", () => resolve({ status, headers, body }));
    },
  );
}

/** A raw client socket: what it received, and when the server closed it (ms after connecting). */
async function open(port: number) {
  const socket: Socket = connect(port, "127.0.0.1");
  const started = Date.now();
  let received = "";
  socket.on("data", (chunk) => {
    received += chunk.toString("latin1");
  });
  socket.on("error", () => undefined);
  const closedAfter = new Promise<number>((resolve) =>
    socket.once("close", () => resolve(Date.now() - started)),
  );
  await new Promise((resolve) => socket.once("connect", resolve));
  return { socket, closedAfter, received: () => received };
}

const closed = (session: ClientHttp2Session) =>
  new Promise<number>((resolve) => {
    const started = Date.now();
    session.once("close", () => resolve(Date.now() - started));
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits up to 2 s for the server to hold no connection (a stream left paused would keep one). */
async function noConnectionsLeft(server: Server): Promise<number> {
  let open = -1;
  for (let i = 0; i < 100 && open !== 0; i++) {
    open = await new Promise<number>((resolve) => server.getConnections((_error, count) => resolve(count)));
    if (open !== 0) await sleep(20);
  }
  return open;
}

describe("telling HTTP/2 from HTTP/1.1 by a connection's first bytes", () => {
  it("takes the preface's first four bytes for HTTP/2 and anything else for HTTP/1.1 at its first differing byte", () => {
    expect(protocolOf(Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))).toBe("h2");
    expect(protocolOf(Buffer.from("PRI "))).toBe("h2");
    expect(protocolOf(Buffer.from("POST /v1/chat/completions HTTP/1.1\r\n"))).toBe("http/1.1");
    expect(protocolOf(Buffer.from("PROPFIND / HTTP/1.1\r\n"))).toBe("http/1.1");
    expect(protocolOf(Buffer.from("G"))).toBe("http/1.1");
    expect(protocolOf(Buffer.from([0x16, 0x03, 0x01]))).toBe("http/1.1");
    expect(protocolOf(Buffer.from("P"))).toBeUndefined();
    expect(protocolOf(Buffer.from("PRI"))).toBeUndefined();
  });
});

describe("the dual server: HTTP/1.1 and h2c on one port", () => {
  it("answers an HTTP/1.1 request and an HTTP/2 one on the same port, both nosniff", async () => {
    const { port, seen } = await serve();
    const http1 = await fetch(`http://127.0.0.1:${port}/one`, { method: "POST", body: "x".repeat(100_000) });
    expect(http1.status).toBe(200);
    expect(await http1.text()).toBe("POST /one 100000");
    expect(http1.headers.get("x-content-type-options")).toBe("nosniff");

    const { answer } = h2Request(h2Session(port), "/two?q=1", "y".repeat(200_000));
    const http2 = await answer;
    expect(http2).toMatchObject({ status: 200, body: "POST /two?q=1 200000" });
    expect(http2.headers["x-content-type-options"]).toBe("nosniff");
    // `:authority` is the request's Host, as for an HTTP/1.1 client.
    expect(seen.requests.map(({ version, host }) => [version, host])).toEqual([
      ["1.1", `127.0.0.1:${port}`],
      ["2.0", `127.0.0.1:${port}`],
    ]);
  });

  it("sends a header HTTP/2 allows once with its first value when given several, others with all", async () => {
    const { port } = await serve();
    const { answer } = h2Request(h2Session(port), "/twice");
    const http2 = await answer;
    expect(http2).toMatchObject({ status: 200, body: "twice" });
    expect(http2.headers["content-type"]).toBe("text/plain");
    expect(http2.headers["x-many"]).toBe("a, b");
  });

  it("serves HTTP/1.1 whose first bytes come one at a time", async () => {
    const { port } = await serve();
    const client = await open(port);
    for (const byte of "PUT /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok") {
      client.socket.write(byte);
      if (client.received() === "") await sleep(2);
    }
    await sleep(100);
    expect(client.received()).toMatch(/^HTTP\/1\.1 200[\s\S]*PUT \/slow 2/);
  });

  it("carries many streams at once over one HTTP/2 session", async () => {
    const { port, waiting, release } = await serve();
    const session = h2Session(port);
    // Every one waits in the handler until all have arrived: they are in flight together.
    const requests = Array.from({ length: 20 }, () => h2Request(session, "/wait", "{}"));
    for (let i = 0; i < 100 && waiting.length < 20; i++) await sleep(20);
    expect(waiting).toHaveLength(20);
    release();
    const answers = await Promise.all(requests.map(({ answer }) => answer));
    expect(answers.every(({ status, body }) => status === 200 && body === "POST /wait 2")).toBe(true);
    expect(session.remoteSettings.maxConcurrentStreams).toBe(128);
  });

  it("lets an HTTP/2 answer stream past the request timeout: it bounds receiving the request only", async () => {
    const { port } = await serve({ headersTimeoutMs: 1_000, requestTimeoutMs: 1_000 });
    const { answer } = h2Request(h2Session(port), "/stream?ms=2000");
    const { status, body } = await answer;
    expect(status).toBe(200);
    expect(body.endsWith("done")).toBe(true);
  });

  it("answers 408 and resets an HTTP/2 request whose body is not in within the request timeout", async () => {
    const { server, port, seen } = await serve({ headersTimeoutMs: 1_000, requestTimeoutMs: 1_000 });
    const session = h2Session(port);
    const stream = session.request({ ":method": "POST", ":path": "/trickle" });
    const trickle = setInterval(() => stream.write("x"), 100);
    const started = Date.now();
    const { status } = await answerOf(stream);
    clearInterval(trickle);
    expect(status).toBe(408);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(3_000);
    // The handler's read of the body fails as when an HTTP/1.1 client leaves.
    expect(seen.readErrors).toEqual(["ECONNRESET"]);
    session.destroy();
    expect(await noConnectionsLeft(server)).toBe(0);
  });

  it("answers an HTTP/2 body past a limit at once, and resets the stream so its client stops sending", async () => {
    const { server, port } = await serve();
    const session = h2Session(port);
    const stream = session.request({ ":method": "POST", ":path": "/limit" });
    stream.on("error", () => undefined);
    // More than the stream's flow-control window: the client cannot finish sending unread.
    stream.write(Buffer.alloc(1024 * 1024));
    const started = Date.now();
    let status = 0;
    let body = "";
    stream.once("response", (headers) => {
      status = Number(headers[":status"]);
    });
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      body += chunk;
    });
    // Reset with NO_ERROR once answered: the client's unsent megabyte is not waited for.
    for (let i = 0; i < 50 && !stream.closed; i++) await sleep(20);
    expect(status).toBe(413);
    expect(body).toBe("too large");
    expect(stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
    expect(Date.now() - started).toBeLessThan(1_000);
    // What the client had sent unread is dropped: its connection closes when the client leaves.
    session.destroy();
    expect(await noConnectionsLeft(server)).toBe(0);
  });

  it("fails the body read of an HTTP/2 request its client resets before the body ended", async () => {
    const { port, seen } = await serve();
    const stream = h2Session(port).request({ ":method": "POST", ":path": "/reset" });
    stream.on("error", () => undefined);
    stream.write('{"partial":');
    await sleep(100);
    // Reset without ending the body (node's close() would send END_STREAM first: a whole body).
    stream.destroy();
    for (let i = 0; i < 50 && seen.readErrors.length === 0; i++) await sleep(20);
    expect(seen.readErrors).toEqual(["ECONNRESET"]);
    expect(seen.requests).toHaveLength(0);
  });
});

describe("an HTTP/2 answer as a handler written for HTTP/1.1 sees it", () => {
  /** What the handler's answer said when it closed, for an answer it ends or leaves running. */
  async function answerAtClose(end: boolean, clientResets: boolean) {
    let report!: (state: Record<string, boolean>) => void;
    const atClose = new Promise<Record<string, boolean>>((resolve) => {
      report = resolve;
    });
    const server = createDualHttpServer(
      (req, res) => {
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.flushHeaders();
          res.write("data: 1\n\n");
          res.once("close", () =>
            report({
              writableFinished: res.writableFinished,
              writableEnded: res.writableEnded,
              destroyed: res.destroyed,
            }),
          );
          if (end) res.end("data: 2\n\n");
        });
      },
      DEFAULT_HTTP_SERVER_LIMITS,
      createLogger("http-dual-test", "silent"),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const stream = h2Session((server.address() as AddressInfo).port).request({
      ":method": "POST",
      ":path": "/",
    });
    stream.on("error", () => undefined);
    stream.end("{}");
    stream.on("data", () => {
      if (clientResets) stream.close(constants.NGHTTP2_CANCEL);
    });
    return atClose;
  }

  it("says an answer the client reset mid-way is not finished, and destroyed, when it closes", async () => {
    // node's own compatibility response says writableFinished: the reset ended its stream's writing.
    expect(await answerAtClose(false, true)).toEqual({
      writableFinished: false,
      writableEnded: false,
      destroyed: true,
    });
  });

  it("says an answer it ended and sent is finished when it closes", async () => {
    expect(await answerAtClose(true, false)).toEqual({
      writableFinished: true,
      writableEnded: true,
      destroyed: true,
    });
  });
});

describe("the dual server's edge bounds", () => {
  it("closes a connection that sends nothing once the header timeout has passed", async () => {
    const { port } = await serve({ headersTimeoutMs: 1_000 });
    const client = await open(port);
    const closedAfter = await client.closedAfter;
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(closedAfter).toBeLessThan(3_000);
  });

  it("keeps HTTP/1.1's own bounds: half headers and a trickling body are 408, an idle keep-alive connection is closed", async () => {
    const limits = { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 1_000 };
    const { port } = await serve(limits);
    const halfHeaders = await open(port);
    halfHeaders.socket.write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Ty");
    const trickling = await open(port);
    trickling.socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
    const trickle = setInterval(() => trickling.socket.write("x"), 100);
    const idle = await open(port);
    idle.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");

    expect(await halfHeaders.closedAfter).toBeLessThan(2_500);
    expect(halfHeaders.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(await trickling.closedAfter).toBeGreaterThanOrEqual(1_900);
    clearInterval(trickle);
    expect(trickling.received()).toMatch(/^HTTP\/1\.1 408/);
    // Advertised as 1 s; node closes 1 s later.
    expect(idle.received()).toMatch(/^HTTP\/1\.1 200[\s\S]*Keep-Alive: timeout=1/);
    expect(await idle.closedAfter).toBeLessThan(3_500);
  });

  it("closes an HTTP/2 session that opens no stream once the header timeout has passed", async () => {
    const { port } = await serve({ headersTimeoutMs: 1_000 });
    const session = h2Session(port);
    const closedAfter = await closed(session);
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(closedAfter).toBeLessThan(3_500);
  });

  it("sends GOAWAY to an HTTP/2 session idle for the keep-alive timeout after its last stream, and closes it", async () => {
    const { port } = await serve({ keepAliveTimeoutMs: 1_000 });
    const session = h2Session(port);
    const goaway = new Promise<number>((resolve) => session.once("goaway", (code) => resolve(code)));
    expect((await h2Request(session, "/").answer).status).toBe(200);
    const closedAfter = await closed(session);
    expect(await goaway).toBe(constants.NGHTTP2_NO_ERROR);
    expect(closedAfter).toBeGreaterThanOrEqual(900);
    expect(closedAfter).toBeLessThan(3_500);
  });

  it("keeps an HTTP/2 session with a stream open past the keep-alive timeout", async () => {
    const { port } = await serve({ keepAliveTimeoutMs: 1_000 });
    const { answer } = h2Request(h2Session(port), "/stream?ms=2500");
    const { status, body } = await answer;
    expect(status).toBe(200);
    expect(body.endsWith("done")).toBe(true);
  });

  it("counts HTTP/2 and HTTP/1.1 connections together against the connection cap", async () => {
    const { port } = await serve({ maxConnections: 2 });
    const session = h2Session(port);
    expect((await h2Request(session, "/").answer).status).toBe(200);
    const held = await open(port);
    held.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await sleep(100);
    const over = await open(port);
    expect(await over.closedAfter).toBeLessThan(1_000);
    expect(over.received()).toBe("");

    session.destroy();
    await sleep(100);
    const again = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: "close" } });
    expect(await again.text()).toBe("GET / 0");
  });
});

describe("the dual server's shutdown", () => {
  it("lets a running HTTP/2 stream finish on close(), refuses new streams on its session, then closes", async () => {
    const { server, port } = await serve();
    const session = h2Session(port);
    const running = h2Request(session, "/stream?ms=1000").answer;
    await sleep(200);
    const serverClosed = new Promise<number>((resolve) => {
      const started = Date.now();
      server.close(() => resolve(Date.now() - started));
    });
    await new Promise((resolve) => session.once("goaway", resolve));
    expect(() => session.request({ ":path": "/late" })).toThrow(/GOAWAY/);
    const { status, body } = await running;
    expect(status).toBe(200);
    expect(body.endsWith("done")).toBe(true);
    expect(await serverClosed).toBeLessThan(2_000);
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it("closes idle HTTP/2 sessions and silent connections on closeIdleConnections(), and cuts running streams on closeAllConnections()", async () => {
    const { server, port } = await serve();
    const idle = h2Session(port);
    expect((await h2Request(idle, "/").answer).status).toBe(200);
    const silent = await open(port);
    const busy = h2Session(port);
    const running = h2Request(busy, "/stream?ms=10000").answer;
    await sleep(200);

    const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    expect(await closed(idle)).toBeLessThan(1_000);
    expect(await silent.closedAfter).toBeLessThan(2_000);
    // Sent GOAWAY by close(), its stream still running.
    await sleep(500);
    expect(busy.destroyed).toBe(false);

    server.closeAllConnections();
    const { body } = await running;
    expect(body).toContain("chunk");
    expect(body.endsWith("done")).toBe(false);
    await serverClosed;
  });
});
