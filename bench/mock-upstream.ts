/**
 * The benchmarks' vendor: an OpenAI-format chat completions server on loopback, answering in
 * ~0.1 ms, run as a process of its own (`tsx mock-upstream.ts serve`, on `PORT` or a free one).
 * Logs a line with "ready":true and the port once it listens.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The usage of every answer, streamed or not: a run knows the tokens it was served from the answers it counted. */
export const MOCK_UPSTREAM_USAGE = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };

const usage = { ...MOCK_UPSTREAM_USAGE, prompt_tokens_details: { cached_tokens: 0 } };
const completion = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "gpt-4o-mini",
  choices: [
    { index: 0, message: { role: "assistant", content: "Hello there, friend!" }, finish_reason: "stop" },
  ],
  usage,
});
const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const streamEnd = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [], usage })}\n\ndata: [DONE]\n\n`;
const stream = `${["Hello", " there", ",", " friend", "!"].map(chunk).join("")}${streamEnd}`;

/**
 * `MOCK_STREAM_EVENTS` > 0: a stream sends that many one-token events, one every
 * `MOCK_STREAM_INTERVAL_MS` (1,000), then the usage and `[DONE]`: a model that takes its time, as
 * the long streams of coding agents do (`bench:streams`). Unset: the whole stream at once.
 */
const SLOW_EVENTS = Number(process.env.MOCK_STREAM_EVENTS ?? 0);
const SLOW_INTERVAL_MS = Number(process.env.MOCK_STREAM_INTERVAL_MS ?? 1_000);

function slowStream(res: ServerResponse) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(chunk(" token"));
  let sent = 1;
  const timer = setInterval(() => {
    if (sent === SLOW_EVENTS) {
      clearInterval(timer);
      res.end(streamEnd);
      return;
    }
    res.write(chunk(" token"));
    sent++;
  }, SLOW_INTERVAL_MS);
  res.once("close", () => clearInterval(timer));
}

function serveMockUpstream() {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (data: Buffer) => {
      body += data.toString();
    });
    req.on("end", () => {
      if (body.includes('"stream":true')) {
        if (SLOW_EVENTS > 0) return slowStream(res);
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(stream);
      } else {
        res.writeHead(200, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(completion),
        });
        res.end(completion);
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
    process.stdout.write(
      `${JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port })}\n`,
    );
  });
}

if (process.argv[2] === "serve") serveMockUpstream();
