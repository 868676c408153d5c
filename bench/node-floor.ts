/**
 * bench:proxy's "node floor": what any gateway written in Node does per request, and nothing more.
 * It reads and parses the request body, forwards the body with the vendor's key swapped in over an
 * undici `Pool`, and relays the answer: a stream piped through chunk by chunk, a JSON answer read
 * and parsed (a gateway must know the usage it reports) before it is sent. No auth, no decision, no
 * event: agentnet's req/s and latency beside this floor's are what its features cost.
 *
 *   UPSTREAM=http://127.0.0.1:<port> PORT=<port> tsx node-floor.ts
 *
 * Logs a line with "ready":true and the port once it listens.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";

const origin = process.env.UPSTREAM;
if (!origin) throw new Error("UPSTREAM names the vendor's origin");
const upstream = new Pool(origin, { connections: 256 });

const server = createServer(async (req, res) => {
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

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  console.log(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }));
});
