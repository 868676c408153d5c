import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  constants,
  type OutgoingHttpHeaders,
} from "node:http2";
import { eventually } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { keptEvents } from "../test-support/requests";
import { ANSWER_USAGE, ScriptedVendor } from "../test-support/vendor";

/**
 * Clients that speak HTTP/2 with prior knowledge (h2c) to the proxy's port, as the AWS SDK's
 * default handler does to an http:// endpoint: the same answers, rows and client-left handling as
 * over HTTP/1.1 (docs/ARCHITECTURE.md, "Security at the edges").
 */

const BODY_LIMIT_BYTES = 64 * 1024;
const SHUTDOWN_DRAIN_MS = 300;

let harness: ProxyHarness;
let stopped = false;
let vendor: ScriptedVendor;
let vendorUrl: string;
const kept = keptEvents();
const sessions: ClientHttp2Session[] = [];

beforeAll(async () => {
  harness = await startProxyHarness("ingress-http2-test", {
    publish: kept.publish,
    bodyLimitBytes: BODY_LIMIT_BYTES,
    shutdownDrainMs: SHUTDOWN_DRAIN_MS,
  });
  vendor = new ScriptedVendor("over h2c");
  vendorUrl = await vendor.start();
});

afterAll(async () => {
  for (const session of sessions) session.destroy();
  // The last test stops it (one harness per file: two would both answer the bus's requests).
  if (!stopped) await harness?.stop();
  await vendor?.stop();
});

function openAiAccount() {
  return harness.accountWith([
    { provider_id: "openai_api", upstream_url: `${vendorUrl}/v1`, key: "sk-test" },
  ]);
}

function h2Session(): ClientHttp2Session {
  const session = connect(harness.proxy.url);
  session.on("error", () => undefined);
  sessions.push(session);
  return session;
}

function chatStream(
  session: ClientHttp2Session,
  token: string,
  stream: boolean,
  headers: OutgoingHttpHeaders = {},
) {
  const request = session.request({
    ":method": "POST",
    ":path": "/v1/chat/completions",
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
    ...headers,
  });
  request.on("error", () => undefined);
  request.end(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }], stream }));
  return request;
}

/** The answer of an HTTP/2 request: its status, headers and whole body. */
function answerOf(stream: ClientHttp2Stream) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve) => {
    let headers: Record<string, unknown> = {};
    let body = "";
    stream.on("response", (received) => {
      headers = received;
    });
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      body += chunk;
    });
    stream.on("close", () => resolve({ status: Number(headers[":status"] ?? 0), headers, body }));
  });
}

async function onlyEventOf(accountId: string) {
  await eventually(() => kept.of(accountId).length > 0);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const events = kept.of(accountId);
  expect(events).toHaveLength(1);
  return events[0];
}

describe("h2c on the proxy's port", () => {
  it("answers a chat completion over HTTP/2 and rows it as over HTTP/1.1", async () => {
    const { accountId, token } = openAiAccount();
    const { status, headers, body } = await answerOf(chatStream(h2Session(), token, false));
    expect(status).toBe(200);
    expect(headers["content-type"]).toContain("application/json");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    const answer = JSON.parse(body) as { choices: { message: { content: string } }[] };
    expect(answer.choices[0]?.message.content).toBe("over h2c");
    expect(await onlyEventOf(accountId)).toMatchObject({
      decision: "allow",
      status_code: 200,
      stream: false,
      input_tokens: ANSWER_USAGE.input,
      output_tokens: ANSWER_USAGE.output,
      source_ip: "127.0.0.1",
    });
  });

  it("streams a chat completion over HTTP/2 as server-sent events", async () => {
    const { accountId, token } = openAiAccount();
    const { status, headers, body } = await answerOf(chatStream(h2Session(), token, true));
    expect(status).toBe(200);
    expect(headers["content-type"]).toContain("text/event-stream");
    expect(body).toContain("over h2c");
    expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(await onlyEventOf(accountId)).toMatchObject({
      status_code: 200,
      stream: true,
      output_tokens: ANSWER_USAGE.output,
    });
  });

  it("serves many requests at once over one HTTP/2 session, and HTTP/1.1 on the same port", async () => {
    const { accountId, token } = openAiAccount();
    const session = h2Session();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => answerOf(chatStream(session, token, i % 2 === 0))),
    );
    expect(answers.map(({ status }) => status)).toEqual(Array(10).fill(200));
    const http1 = await fetch(`${harness.proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(http1.status).toBe(200);
    await eventually(() => kept.of(accountId).length === 11);
  });

  it("checks the account's endpoint against :authority as against Host", async () => {
    const { token } = openAiAccount();
    const session = h2Session();
    const elsewhere = await answerOf(
      chatStream(session, token, false, { ":authority": "other.example.com" }),
    );
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.headers["x-agentnet-reason"]).toBe("gateway.endpoint_mismatch");
    // The test account's endpoint (factories.ts).
    const own = await answerOf(
      chatStream(session, token, false, { ":authority": "acme.gw.example.com:443" }),
    );
    expect(own.status).toBe(200);
  });

  it("answers refusals in the wire's shape over HTTP/2", async () => {
    const session = h2Session();
    const unauthenticated = await answerOf(chatStream(session, "agn_unknown", false));
    expect(unauthenticated.status).toBe(401);
    expect(JSON.parse(unauthenticated.body)).toMatchObject({ error: { code: "auth.invalid_token" } });
    const health = session.request({ ":path": "/healthz" });
    health.end();
    expect((await answerOf(health)).status).toBe(200);
  });

  it("answers a body past the limit 413 as it is read, and stops its client sending the rest", async () => {
    const { token } = openAiAccount();
    const stream = h2Session().request({
      ":method": "POST",
      ":path": "/v1/chat/completions",
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
    });
    stream.on("error", () => undefined);
    // No content-length: the limit holds as the body is read. The client never ends its body.
    stream.write(
      JSON.stringify({
        model: "gpt-4o",
        messages: [{ role: "user", content: "x".repeat(BODY_LIMIT_BYTES * 4) }],
      }),
    );
    let status = 0;
    let body = "";
    stream.once("response", (headers) => {
      status = Number(headers[":status"]);
    });
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      body += chunk;
    });
    await eventually(() => stream.closed, 2_000);
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({ error: { code: "request.too_large" } });
    expect(stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
  });

  it("aborts the upstream request when the client resets its stream mid-answer, and rows it 499", async () => {
    const { accountId, token } = openAiAccount();
    vendor.always = { kind: "hold" };
    const closedBefore = vendor.closedEarly;
    try {
      const stream = chatStream(h2Session(), token, true);
      const first = await new Promise<string>((resolve) =>
        stream.once("data", (chunk: Buffer) => resolve(String(chunk))),
      );
      expect(first).toContain("data:");
      stream.close(constants.NGHTTP2_CANCEL);
      await eventually(() => vendor.closedEarly > closedBefore);
    } finally {
      vendor.always = { kind: "answer" };
      vendor.release();
    }
    expect(await onlyEventOf(accountId)).toMatchObject({ status_code: 499, decision: "allow", stream: true });
  });
});

describe("h2c at shutdown (last: it stops the proxy)", () => {
  it("sends GOAWAY, cuts a stream still running after the drain bound, and rows it before stop() ends", async () => {
    const { accountId, token } = openAiAccount();
    vendor.always = { kind: "hold" };
    const closedBefore = vendor.closedEarly;
    const session = h2Session();
    const goaway = new Promise((resolve) => session.once("goaway", resolve));
    const stream = chatStream(session, token, true);
    const answer = answerOf(stream);
    await new Promise((resolve) => stream.once("data", resolve));

    const started = Date.now();
    stopped = true;
    await harness.stop();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(SHUTDOWN_DRAIN_MS - 50);
    expect(took).toBeLessThan(5_000);
    await goaway;
    const { body } = await answer;
    expect(body).toContain("data:");
    expect(body).not.toContain("[DONE]");
    expect(vendor.closedEarly).toBe(closedBefore + 1);
    expect(kept.of(accountId)).toMatchObject([{ decision: "allow", stream: true }]);
  });
});
