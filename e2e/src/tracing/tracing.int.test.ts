import { randomBytes } from "node:crypto";
import type { AccessLogPage } from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Account, configure, readUntil } from "../setup";
import { type Stack, startStack } from "../stack";
import { OtlpReceiver, type ReceivedSpan } from "./receiver";

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;
const ERROR = 2;

let receiver: OtlpReceiver;
let stack: Stack;
let account: Account;
beforeAll(async () => {
  receiver = new OtlpReceiver();
  stack = await startStack({ telemetry: true, tracesUrl: `${await receiver.start()}/v1/traces` });
  account = await stack.newAccount();
  await configure(stack, account).policy([account.openaiProvider.id]);
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

/** The spans of a trace once `done` accepts them: services export in batches, asynchronously. */
const spansOf = (traceId: string, done: (spans: ReceivedSpan[]) => boolean) =>
  readUntil(async () => {
    await stack.tracing?.flush();
    return receiver.trace(traceId);
  }, done);

const servicesOf = (spans: ReceivedSpan[]) => new Set(spans.map((span) => span.service));
const only = (spans: ReceivedSpan[], match: Partial<ReceivedSpan>) => {
  const found = spans.filter((span) =>
    Object.entries(match).every(([key, value]) => span[key as keyof ReceivedSpan] === value),
  );
  expect(found, JSON.stringify(match)).toHaveLength(1);
  return found[0] as ReceivedSpan;
};

describe("with OTEL_EXPORTER_OTLP_ENDPOINT set, one request is one trace across the services", () => {
  it("a proxied request: the proxy's chat span, the bus calls it made, and its event settled and stored, named by the access-log row", async () => {
    stack.openai.usage = { input: 1_000, output: 200, cached: 400, creation: 0 };
    const prompt = "a prompt that must stay out of every span";
    const response = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: prompt }] }),
    });
    expect(response.status).toBe(200);

    const logs = await readUntil(
      () => account.must(stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)),
      (page) => page.data.length === 1,
    );
    const traceId = logs.data[0]?.trace_id ?? "";
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    const spans = await spansOf(
      traceId,
      (found) =>
        found.some((span) => span.service === "telemetry") &&
        found.some((span) => span.service === "consumption"),
    );
    expect(servicesOf(spans)).toEqual(
      new Set(["gateway-proxy", "control-plane", "consumption", "telemetry"]),
    );

    const chat = only(spans, { service: "gateway-proxy", kind: SERVER });
    expect(chat.name).toBe("chat gpt-4o");
    expect(chat.parentSpanId).toBe("");
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.system": "openai",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.response.model": "gpt-4o",
      "gen_ai.usage.input_tokens": 1_000,
      "gen_ai.usage.output_tokens": 200,
      "gen_ai.usage.cache_read.input_tokens": 400,
      "http.request.method": "POST",
      "http.route": "/v1/chat/completions",
      "http.response.status_code": 200,
      "agentnet.request_id": logs.data[0]?.id,
      "agentnet.account_id": account.owner.account_id,
      "agentnet.decision": "allow",
      "agentnet.provider.id": account.openaiProvider.id,
    });

    // The caller's token resolved over the bus: the proxy's CLIENT span, the control-plane's SERVER span under it.
    const resolve = only(spans, { service: "gateway-proxy", kind: CLIENT, name: "agn.ctl.auth.resolve" });
    expect(resolve.parentSpanId).toBe(chat.spanId);
    expect(
      only(spans, { service: "control-plane", kind: SERVER, name: "agn.ctl.auth.resolve" }).parentSpanId,
    ).toBe(resolve.spanId);

    // The request's event went through JetStream carrying the chat span's context.
    for (const [service, name] of [
      ["consumption", "settle agn.requests"],
      ["telemetry", "store agn.requests"],
    ] as const) {
      const consumed = only(spans, { service, kind: CONSUMER, name });
      expect(consumed.parentSpanId).toBe(chat.spanId);
      // Its batch's span, in a trace of its own, links every event it held.
      const batch = receiver.spans.find((span) => span.spanId === consumed.links[0]?.spanId);
      expect(batch?.name).toBe(`${name} batch`);
      expect(batch?.links).toContainEqual({ traceId, spanId: chat.spanId });
    }

    const exported = JSON.stringify(spans);
    for (const secret of [prompt, account.token, "sk-upstream-openai"])
      expect(exported).not.toContain(secret);
  });

  it("a denied request's span says what the gateway decided and why, without failing", async () => {
    // The account's one policy reaches its OpenAI provider only.
    const response = await fetch(`${stack.proxy.url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": account.token,
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
      },
      body: JSON.stringify({
        model: "claude-sonnet-4-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(response.status).toBe(403);
    const logs = await readUntil(
      () =>
        account.must(
          stack.api<AccessLogPage>("GET", "/agent-network/access-logs?decision=deny", account.token),
        ),
      (page) => page.data.length === 1,
    );
    const traceId = logs.data[0]?.trace_id ?? "";
    const spans = await spansOf(traceId, (found) => found.some((span) => span.service === "gateway-proxy"));
    const chat = only(spans, { service: "gateway-proxy", kind: SERVER });
    expect(chat.attributes).toMatchObject({
      "agentnet.decision": "deny",
      "agentnet.deny_reason": logs.data[0]?.deny_reason,
      "http.response.status_code": 403,
    });
    expect(chat.statusCode).not.toBe(ERROR);
  });

  it("an API request: the api-gateway's span continues the client's traceparent, through the control-plane to the provider-verifier", async () => {
    const traceId = randomBytes(16).toString("hex");
    const clientSpanId = randomBytes(8).toString("hex");
    const response = await fetch(`${stack.apiUrl}/api/agent-network/providers`, {
      method: "POST",
      headers: {
        authorization: `Token ${account.token}`,
        "content-type": "application/json",
        traceparent: `00-${traceId}-${clientSpanId}-01`,
      },
      body: JSON.stringify({
        provider_id: "openai_api",
        name: "OpenAI again",
        upstream_url: `${stack.openaiUrl}/v1`,
        api_key: "sk-upstream-second",
      }),
    });
    expect(response.status).toBe(200);

    const spans = await spansOf(traceId, (found) =>
      found.some((span) => span.service === "provider-verifier"),
    );
    expect(servicesOf(spans)).toEqual(new Set(["api-gateway", "control-plane", "provider-verifier"]));
    const http = only(spans, { service: "api-gateway", kind: SERVER });
    expect(http.name).toBe("HTTP POST /api/agent-network/providers");
    expect(http.parentSpanId).toBe(clientSpanId);
    expect(http.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/api/agent-network/providers",
      "http.response.status_code": 200,
    });
    const create = only(spans, { service: "api-gateway", kind: CLIENT, name: "agn.ctl.providers.create" });
    expect(create.parentSpanId).toBe(http.spanId);
    const served = only(spans, { service: "control-plane", kind: SERVER, name: "agn.ctl.providers.create" });
    expect(served.parentSpanId).toBe(create.spanId);
    const verify = only(spans, { service: "control-plane", kind: CLIENT, name: "agn.verify.provider" });
    expect(verify.parentSpanId).toBe(served.spanId);
    expect(only(spans, { service: "provider-verifier", kind: SERVER }).parentSpanId).toBe(verify.spanId);
    expect(JSON.stringify(spans)).not.toContain("sk-upstream-second");
  });

  it("an API error the service answers is an answer, not a failed span; a route's ids stay out of its name", async () => {
    const traceId = randomBytes(16).toString("hex");
    const response = await fetch(`${stack.apiUrl}/api/agent-network/providers/no-such-provider`, {
      headers: {
        authorization: `Token ${account.token}`,
        traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01`,
      },
    });
    expect(response.status).toBe(404);
    const spans = await spansOf(traceId, (found) => found.some((span) => span.service === "control-plane"));
    const http = only(spans, { service: "api-gateway", kind: SERVER });
    expect(http.name).toBe("HTTP GET /api/agent-network/providers/:providerId");
    expect(http.attributes["http.response.status_code"]).toBe(404);
    expect(spans.map((span) => span.statusCode)).not.toContain(ERROR);
  });
});
