import type { Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { httpServerEnv, httpServerLimits } from "./env";
import { createHttpServer, DEFAULT_HTTP_SERVER_LIMITS, type HttpServerLimits } from "./http";
import { createLogger } from "./logger";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server that answers `ok`, or streams for `/stream?ms=N` (N ms, a chunk every 250 ms). */
async function serve(limits: Partial<HttpServerLimits> = {}) {
  const server = createHttpServer(
    (req, res) => {
      const ms = Number(new URL(req.url ?? "/", "http://x").searchParams.get("ms") ?? 0);
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/plain" });
        if (ms === 0) {
          res.end("ok");
          return;
        }
        const started = Date.now();
        const timer = setInterval(() => {
          res.write("chunk\n");
          if (Date.now() - started >= ms) {
            clearInterval(timer);
            res.end("done");
          }
        }, 250);
      });
    },
    { ...DEFAULT_HTTP_SERVER_LIMITS, ...limits },
    createLogger("http-test", "silent"),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw client socket: what it received, and when the server closed it (ms after connecting). */
async function open(port: number) {
  const socket: Socket = connect(port, "127.0.0.1");
  const started = Date.now();
  let received = "";
  socket.on("data", (chunk) => {
    received += chunk.toString();
  });
  socket.on("error", () => undefined);
  const closedAfter = new Promise<number>((resolve) =>
    socket.once("close", () => resolve(Date.now() - started)),
  );
  await new Promise((resolve) => socket.once("connect", resolve));
  return { socket, closedAfter, received: () => received };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the services' HTTP server", () => {
  it("closes a client that sends half its headers within 11 s (the default 10 s bound, checked every second)", async () => {
    const port = await serve();
    const client = await open(port);
    client.socket.write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Ty");
    const closedAfter = await client.closedAfter;
    expect(closedAfter).toBeGreaterThanOrEqual(9_500);
    expect(closedAfter).toBeLessThan(12_000);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  }, 15_000);

  it("closes a request whose body trickles in once the request timeout has passed", async () => {
    const port = await serve({ headersTimeoutMs: 1_000, requestTimeoutMs: 2_000 });
    const client = await open(port);
    client.socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
    const trickle = setInterval(() => client.socket.write("x"), 100);
    const closedAfter = await client.closedAfter;
    clearInterval(trickle);
    expect(closedAfter).toBeGreaterThanOrEqual(1_900);
    expect(closedAfter).toBeLessThan(3_500);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it("lets an answer stream for longer than the request timeout: it bounds receiving the request only", async () => {
    const port = await serve({ headersTimeoutMs: 1_000, requestTimeoutMs: 1_000 });
    const response = await fetch(`http://127.0.0.1:${port}/stream?ms=3000`);
    const text = await response.text();
    expect(text.endsWith("done")).toBe(true);
    expect(text.split("chunk").length).toBeGreaterThan(10);
  });

  it("closes an idle keep-alive connection 5 s after its last answer by default (node adds 1 s)", async () => {
    const port = await serve();
    const client = await open(port);
    client.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await sleep(200);
    expect(client.received()).toMatch(/^HTTP\/1\.1 200[\s\S]*Keep-Alive: timeout=5/);
    // The socket times out 1 s after the advertised 5 s, so a client trusting the header never
    // sends on a connection the server is closing.
    const closedAfter = await client.closedAfter;
    expect(closedAfter).toBeGreaterThanOrEqual(4_900);
    expect(closedAfter).toBeLessThan(7_000);
  }, 10_000);

  it("closes connections beyond the cap as soon as they are accepted, and serves again once one left", async () => {
    const port = await serve({ maxConnections: 2 });
    const held = [await open(port), await open(port)];
    const over = await open(port);
    expect(await over.closedAfter).toBeLessThan(1_000);
    expect(over.received()).toBe("");

    held[0]?.socket.destroy();
    await held[0]?.closedAfter;
    await sleep(100);
    const response = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: "close" } });
    expect(await response.text()).toBe("ok");
  });

  it("says nosniff on every answer", async () => {
    const port = await serve();
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("takes its bounds from the environment: 10 s for headers, 30 s for a request, 5 s idle, 4,096 connections", async () => {
    const env = z.object(httpServerEnv).parse({});
    expect(httpServerLimits(env)).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 4_096,
    });
    expect(
      httpServerLimits(z.object(httpServerEnv).parse({ HTTP_MAX_CONNECTIONS: "64" })).maxConnections,
    ).toBe(64);
  });
});
