import { DEFAULT_ROUTING, type GatewayRequestEvent, type PolicyRouting } from "@agentnet/contracts";
import { eventually } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AccountProvider, type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { ANSWER_USAGE, ScriptedVendor } from "../test-support/vendor";

const COOLDOWN = { failures: 2, windowMs: 60_000, cooldownMs: 1_500 };
const HEADERS_TIMEOUT_MS = 400;

let harness: ProxyHarness;
const events: GatewayRequestEvent[] = [];
const vendors: ScriptedVendor[] = [];

beforeAll(async () => {
  harness = await startProxyHarness("routing-test", {
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    cooldown: COOLDOWN,
    publish: async (_subject, event) => {
      events.push(event as GatewayRequestEvent);
    },
  });
});

afterAll(async () => {
  await harness?.stop();
  await Promise.all(vendors.map((vendor) => vendor.stop()));
});

interface Upstream {
  vendor?: ScriptedVendor;
  /** An address nothing listens on: the connection is refused. */
  refused?: boolean;
  flavor?: "openai" | "anthropic";
  /** A stored key this proxy cannot open (sealed for another provider). */
  unopenableKey?: boolean;
}

async function closedPortUrl(): Promise<string> {
  const vendor = new ScriptedVendor();
  const url = await vendor.start();
  await vendor.stop();
  return url;
}

/** An account whose one policy grants the upstreams in order, and the token of its one caller. */
async function accountWith(upstreams: Upstream[], routing?: PolicyRouting) {
  const providers: AccountProvider[] = [];
  for (const upstream of upstreams) {
    const anthropic = upstream.flavor === "anthropic";
    let url = upstream.refused ? await closedPortUrl() : "";
    if (upstream.vendor) {
      url = await upstream.vendor.start();
      vendors.push(upstream.vendor);
    }
    providers.push({
      provider_id: anthropic ? "anthropic_api" : "openai_api",
      upstream_url: anthropic ? url : `${url}/v1`,
      key: "sk-test",
      keySealedFor: upstream.unopenableKey ? "another-provider" : undefined,
    });
  }
  return harness.accountWith(providers, { routing });
}

const ask = (token: string, body: Record<string, unknown>, path = "/v1/chat/completions") =>
  fetch(`${harness.proxy.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      ...(path === "/v1/messages" ? { "anthropic-version": "2023-06-01" } : {}),
    },
    body: JSON.stringify(body),
  });
const chat = (token: string, stream = false) =>
  ask(token, { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], ...(stream ? { stream } : {}) });

/** The one event of the account's one request (and that there is no second). */
async function onlyEventOf(accountId: string): Promise<GatewayRequestEvent> {
  await eventually(() => events.some((event) => event.account_id === accountId));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const mine = events.filter((event) => event.account_id === accountId);
  expect(mine).toHaveLength(1);
  return mine[0] as GatewayRequestEvent;
}

const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
const unavailable = (message: string) => ({ error: { message, type: "server_error" } });

describe("routing: a failure before the answer's first byte goes to the next provider", () => {
  it("answers with the second provider when the first's credential cannot be opened", async () => {
    const first = new ScriptedVendor("from-a");
    const second = new ScriptedVendor("from-b");
    const { accountId, token, providers } = await accountWith([
      { vendor: first, unopenableKey: true },
      { vendor: second },
    ]);
    const res = await chat(token);
    expect(res.status).toBe(200);
    expect(first.seen).toHaveLength(0);
    const event = await onlyEventOf(accountId);
    expect(event.attempts?.map((attempt) => [attempt.provider_id, attempt.status, attempt.error])).toEqual([
      [providers[0]?.id, 502, "provider.credential_unavailable"],
      [providers[1]?.id, 200, ""],
    ]);
  });

  it("answers with the second provider when the first answers 503, one event listing both attempts", async () => {
    const first = new ScriptedVendor("from-a");
    first.always = { kind: "status", status: 503, body: unavailable("a down") };
    const second = new ScriptedVendor("from-b");
    const { accountId, token, providers } = await accountWith([{ vendor: first }, { vendor: second }]);
    const res = await chat(token);
    expect(res.status).toBe(200);
    expect(
      ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe("from-b");
    const event = await onlyEventOf(accountId);
    expect(event).toMatchObject({
      status_code: 200,
      resolved_provider_id: providers[1]?.id,
      input_tokens: ANSWER_USAGE.input,
      output_tokens: ANSWER_USAGE.output,
    });
    expect(event.attempts?.map((attempt) => [attempt.provider_id, attempt.status, attempt.error])).toEqual([
      [providers[0]?.id, 503, ""],
      [providers[1]?.id, 200, ""],
    ]);
    expect(first.seen[0]).toEqual(second.seen[0]);
  });

  it("answers a messages request when the first provider is overloaded (529)", async () => {
    const first = new ScriptedVendor("from-a");
    first.always = { kind: "status", status: 529, body: overloaded };
    const second = new ScriptedVendor("from-b");
    const { accountId, token } = await accountWith([
      { vendor: first, flavor: "anthropic" },
      { vendor: second, flavor: "anthropic" },
    ]);
    const res = await ask(
      token,
      { model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: "hi" }] },
      "/v1/messages",
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content: { text: string }[] }).content[0]?.text).toBe("from-b");
    expect((await onlyEventOf(accountId)).attempts?.map((attempt) => attempt.status)).toEqual([529, 200]);
  });

  it("answers with the second provider when the first refuses the connection", async () => {
    const second = new ScriptedVendor("from-b");
    const { accountId, token } = await accountWith([{ refused: true }, { vendor: second }]);
    expect((await chat(token)).status).toBe(200);
    const event = await onlyEventOf(accountId);
    expect(event.attempts?.[0]).toMatchObject({ status: 0, error: "connect_failed" });
  });

  it("answers with the second provider when the first sends no headers in time", async () => {
    const first = new ScriptedVendor("from-a");
    first.always = { kind: "slow", ms: HEADERS_TIMEOUT_MS * 4 };
    const second = new ScriptedVendor("from-b");
    const { accountId, token } = await accountWith([{ vendor: first }, { vendor: second }]);
    expect((await chat(token)).status).toBe(200);
    expect((await onlyEventOf(accountId)).attempts?.[0]).toMatchObject({ status: 0, error: "timeout" });
  });

  it("retries the only provider after its 429's retry-after", async () => {
    const only = new ScriptedVendor("from-a");
    only.script = [
      { kind: "status", status: 429, body: unavailable("slow down"), headers: { "retry-after": "1" } },
    ];
    const { accountId, token } = await accountWith([{ vendor: only }]);
    const startedAt = Date.now();
    expect((await chat(token)).status).toBe(200);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_000);
    expect(only.seen).toHaveLength(2);
    expect((await onlyEventOf(accountId)).attempts?.map((attempt) => attempt.status)).toEqual([429, 200]);
  });

  it("rows a client that leaves while the retry waits as a client that left (499)", async () => {
    const only = new ScriptedVendor("from-a");
    only.script = [
      { kind: "status", status: 429, body: unavailable("slow down"), headers: { "retry-after": "2" } },
    ];
    const { accountId, token } = await accountWith([{ vendor: only }]);
    await expect(
      fetch(`${harness.proxy.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }),
        signal: AbortSignal.timeout(300),
      }),
    ).rejects.toThrow();
    const event = await onlyEventOf(accountId);
    expect(event.status_code).toBe(499);
    expect(only.seen).toHaveLength(1);
  });
});

describe("routing: streams", () => {
  it("fails over a stream that died before its first byte: the client gets the second's whole stream", async () => {
    const first = new ScriptedVendor("from-a");
    first.always = { kind: "dropBeforeFirstByte" };
    const second = new ScriptedVendor("from-b");
    const { accountId, token } = await accountWith([{ vendor: first }, { vendor: second }]);
    const res = await chat(token, true);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("from-b");
    expect(text).toContain("[DONE]");
    const event = await onlyEventOf(accountId);
    expect(event).toMatchObject({ stream: true, output_tokens: ANSWER_USAGE.output });
    expect(event.attempts?.[0]).toMatchObject({ status: 0, error: "stream_failed_before_first_byte" });
  });

  it("ends a stream that died after its first byte as the vendor ended it, trying nothing else", async () => {
    const first = new ScriptedVendor("from-a");
    first.always = { kind: "dropAfterFirstByte" };
    const second = new ScriptedVendor("from-b");
    const { accountId, token } = await accountWith([{ vendor: first }, { vendor: second }]);
    const res = await chat(token, true);
    expect(res.status).toBe(200);
    const text = await res.text().catch(() => "broken");
    expect(text).not.toContain("[DONE]");
    expect(second.seen).toHaveLength(0);
    expect((await onlyEventOf(accountId)).attempts).toBeUndefined();
  });
});

describe("routing: when every attempt fails", () => {
  it("answers the last vendor's status and body", async () => {
    const first = new ScriptedVendor();
    first.always = { kind: "status", status: 503, body: unavailable("a down") };
    const second = new ScriptedVendor();
    second.always = { kind: "status", status: 502, body: unavailable("b down") };
    const { accountId, token } = await accountWith([{ vendor: first }, { vendor: second }]);
    const res = await chat(token);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual(unavailable("b down"));
    const event = await onlyEventOf(accountId);
    expect(event.status_code).toBe(502);
    expect(event.attempts?.map((attempt) => attempt.status)).toEqual([503, 502]);
  });

  it("answers 502 in the route's wire format when no provider could be reached", async () => {
    const { accountId, token } = await accountWith([
      { refused: true, flavor: "anthropic" },
      { refused: true, flavor: "anthropic" },
    ]);
    const res = await ask(
      token,
      { model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: "hi" }] },
      "/v1/messages",
    );
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect((await onlyEventOf(accountId)).attempts).toHaveLength(2);
  });

  it("lists no attempts when there was only one", async () => {
    const { accountId, token } = await accountWith([{ refused: true }], {
      ...DEFAULT_ROUTING,
      retries_enabled: false,
    });
    const res = await chat(token);
    expect(res.status).toBe(502);
    expect((await onlyEventOf(accountId)).attempts).toBeUndefined();
  });

  it("tries nothing else after a client error", async () => {
    const first = new ScriptedVendor();
    first.always = {
      kind: "status",
      status: 400,
      body: { error: { message: "bad", type: "invalid_request_error" } },
    };
    const second = new ScriptedVendor();
    const { token } = await accountWith([{ vendor: first }, { vendor: second }]);
    expect((await chat(token)).status).toBe(400);
    expect(second.seen).toHaveLength(0);
  });
});

describe("routing: cooldown", () => {
  it("skips a provider that kept failing until its cooldown is over, then probes it", async () => {
    const first = new ScriptedVendor("from-a");
    first.always = { kind: "status", status: 503, body: unavailable("a down") };
    const second = new ScriptedVendor("from-b");
    const { token, providers } = await accountWith([{ vendor: first }, { vendor: second }]);
    for (let i = 0; i < COOLDOWN.failures; i++) expect((await chat(token)).status).toBe(200);
    expect(first.seen).toHaveLength(COOLDOWN.failures);
    const status = async () =>
      (
        (await (await fetch(`${harness.proxy.url}/status`)).json()) as {
          cooling_providers: { provider_id: string }[];
        }
      ).cooling_providers;
    expect((await status()).map((entry) => entry.provider_id)).toContain(providers[0]?.id);

    expect((await chat(token)).status).toBe(200);
    expect(first.seen).toHaveLength(COOLDOWN.failures);

    await new Promise((resolve) => setTimeout(resolve, COOLDOWN.cooldownMs + 100));
    first.always = { kind: "answer" };
    const probe = await chat(token);
    expect(
      ((await probe.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe("from-a");
    expect((await status()).map((entry) => entry.provider_id)).not.toContain(providers[0]?.id);
  });
});
