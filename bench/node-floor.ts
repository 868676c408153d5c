/**
 * bench:proxy's "node floor": what any gateway written in Node does per request, and nothing more.
 * It reads and parses the request body, forwards the body with the vendor's key swapped in over an
 * undici `Pool`, and relays the answer: a stream piped through chunk by chunk, a JSON answer read
 * and parsed (a gateway must know the usage it reports) before it is sent. No auth, no decision, no
 * event: agentnet's req/s and latency beside this floor's are what its features cost.
 *
 *   UPSTREAM=http://127.0.0.1:<port> PORT=<port> tsx node-floor.ts
 *
 * `UPSTREAM_CONNECTIONS` bounds its pool to the vendor (256, as the proxy's default; bench:streams
 * raises both so that every stream runs at once).
 *
 * Logs a line with "ready":true and the port once it listens. `GET /stats` answers its RSS, heap,
 * event-loop delay and CPU time.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Pool } from "undici";

const origin = process.env.UPSTREAM;
if (!origin) throw new Error("UPSTREAM names the vendor's origin");
const upstream = new Pool(origin, { connections: Number(process.env.UPSTREAM_CONNECTIONS ?? 256) });

/** Sampled as prom-client samples the proxy's (`nodejs_eventloop_lag_*`), and reset on each read likewise. */
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

/** `GET /stats`: what bench:streams reads from the proxy's metrics, for the floor (ms and bytes). */
function sendStats(res: ServerResponse) {
  const { rss, heapUsed } = process.memoryUsage();
  const { user, system } = process.cpuUsage();
  const stats = {
    rss,
    heapUsed,
    lagP99Ms: loopDelay.percentile(99) / 1e6,
    lagMaxMs: loopDelay.max / 1e6,
    cpuSeconds: (user + system) / 1e6,
  };
  loopDelay.reset();
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(stats));
}

const server = createServer(async (req, res) => {
  if (req.method === "GET" && req.url === "/stats") return sendStats(res);
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    JSON.parse(body.toString("utf8"));
    const answer = await upstream.request({
      method: "POST",
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
      body,
    });
    const contentType = String(answer.headers["content-type"] ?? "application/json");
    res.writeHead(answer.statusCode, { "content-type": contentType });
    if (contentType.includes("text/event-stream")) {
      for await (const chunk of answer.body) res.write(chunk);
      res.end();
      return;
    }
    const text = await answer.body.text();
    JSON.parse(text);
    res.end(text);
  } catch (error) {
    if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: String(error) } }));
  }
});

// A clean exit on the bench's SIGTERM, so that a CPU profile (BENCH_PROXY_NODE_ARGS) is written.
process.on("SIGTERM", () => process.exit(0));

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  console.log(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }));
});
