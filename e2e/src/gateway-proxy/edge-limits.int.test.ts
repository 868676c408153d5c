import { MAX_MODEL_LENGTH, MAX_RATE_PER_1K, MAX_SESSION_ID_LENGTH, type Provider } from "@agentnet/contracts";
import { connectTestMongo } from "@agentnet/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Account, configure } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A raw request to the proxy, so the body can be anything a client could send. */
const send = (
  account: Account,
  body: string | Buffer,
  options: { path?: string; headers?: Record<string, string> } = {},
) =>
  request(`${stack.proxy.url}${options.path ?? "/v1/chat/completions"}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${account.token}`,
      "content-type": "application/json",
      ...options.headers,
    },
    body,
  });

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], ...extra });

describe("the proxy bounds what a caller sends before any event is built", () => {
  it("answers a 1.1 MB model 400 in the wire's shape, logs it cut to 256 characters, and serves the next request", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id, account.anthropicProvider.id]);
    const huge = "m".repeat(1_100_000);

    const refused = await send(account, chat(huge));
    expect(refused.statusCode).toBe(400);
    expect(refused.headers["x-agentnet-reason"]).toBe("request.invalid");
    expect(await refused.body.json()).toEqual({
      error: {
        message: "model must be at most 256 characters (request.invalid)",
        type: "invalid_request_error",
        code: "request.invalid",
        param: null,
      },
    });
    const anthropic = await send(account, JSON.stringify({ model: huge, max_tokens: 1, messages: [] }), {
      path: "/v1/messages",
    });
    expect(anthropic.statusCode).toBe(400);
    expect(await anthropic.body.json()).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: /model must be at most 256/ },
    });

    const rows = await account.events.waitFor(2);
    for (const row of rows) {
      expect(row).toMatchObject({ decision: "deny", deny_reason: "request.invalid", status_code: 400 });
      expect(row.model).toHaveLength(MAX_MODEL_LENGTH);
      expect(row.model.endsWith("…")).toBe(true);
    }

    const next = await send(account, chat("gpt-4o"));
    expect(next.statusCode).toBe(200);
    await next.body.dump();
    const [, , served] = await account.events.waitFor(3);
    expect(served).toMatchObject({ decision: "allow", status_code: 200, model: "gpt-4o" });
  });

  it("answers a model holding a bidirectional override 400", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const refused = await send(account, chat("gpt-4o\u202Eini"));
    expect(refused.statusCode).toBe(400);
    expect(await refused.body.json()).toMatchObject({
      error: { code: "request.invalid", message: /bidirectional control characters \(U\+202E\)/ },
    });
  });

  it("answers a session id of 1 MB (Claude Code's metadata) or 10 KB (x-session-id) 400, logged cut", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.anthropicProvider.id]);
    const metadata = { user_id: JSON.stringify({ device_id: "d", session_id: "s".repeat(1_000_000) }) };
    const body = JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 16, messages: [], metadata });
    const fromBody = await send(account, body, { path: "/v1/messages" });
    expect(fromBody.statusCode).toBe(400);
    expect(await fromBody.body.json()).toMatchObject({
      error: { message: "the session id must be at most 256 characters (request.invalid)" },
    });
    const fromHeader = await send(account, chat("gpt-4o"), {
      headers: { "x-session-id": "s".repeat(10_000) },
    });
    expect(fromHeader.statusCode).toBe(400);
    await fromHeader.body.dump();

    const rows = await account.events.waitFor(2);
    for (const row of rows) {
      expect(row.deny_reason).toBe("request.invalid");
      expect(row.session_id).toHaveLength(MAX_SESSION_ID_LENGTH);
    }
    const fits = await send(account, chat("gpt-4o"), { headers: { "x-session-id": "s".repeat(256) } });
    expect(fits.statusCode).toBe(403); // the policy grants only the Anthropic provider
    await fits.body.dump();
  });

  it("answers a body that is not UTF-8 400, as the API does", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const invalid = Buffer.concat([
      Buffer.from('{"model":"gpt-'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('4o"}'),
    ]);
    const refused = await send(account, invalid);
    expect(refused.statusCode).toBe(400);
    expect(await refused.body.json()).toMatchObject({
      error: { code: "request.invalid_utf8", message: /not valid UTF-8/ },
    });
  });
});

describe("prices at their bound never make the proxy fail", () => {
  it("answers and logs max_tokens 1e8 on a model priced at the highest rate a provider may set", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const rates = { input_per_1k: MAX_RATE_PER_1K, output_per_1k: MAX_RATE_PER_1K };
    await account.must(
      stack.api<Provider>("PUT", `/agent-network/providers/${account.openaiProvider.id}`, account.token, {
        provider_id: "openai_api",
        name: "OpenAI",
        upstream_url: account.openaiProvider.upstream_url,
        models: [{ id: "gpt-4o", ...rates }],
      }),
    );
    stack.openai.usage = { input: 1_000, output: 500, cached: 0, creation: 0 };
    const answered = await send(account, chat("gpt-4o", { max_tokens: 100_000_000 }));
    expect(answered.statusCode).toBe(200);
    await answered.body.dump();
    const [row] = await account.events.waitFor(1);
    // 1,500 tokens at $0.10 each.
    expect(row).toMatchObject({ decision: "allow", status_code: 200, input_tokens: 1_000, cost_usd: 150 });
  });

  it("refuses, with a row, a model a provider stored before the bound prices at $1e12 per 1k", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    // Written to the store directly, as a provider saved before rates were bounded would be.
    const connection = await connectTestMongo();
    await connection.db
      ?.collection("providers")
      .updateOne(
        { _id: account.openaiProvider.id as never },
        { $set: { models: [{ id: "gpt-4o", input_per_1k: 1e12, output_per_1k: 1 }] } },
      );
    await connection.close();

    const refused = await send(account, chat("gpt-4o", { max_tokens: 100_000_000 }));
    expect(refused.statusCode).toBe(403);
    expect(await refused.body.json()).toMatchObject({
      error: { code: "pricing.rate_out_of_range", message: /priced above 100 USD per 1000 tokens/ },
    });
    const [row] = await account.events.waitFor(1);
    expect(row).toMatchObject({ decision: "deny", deny_reason: "pricing.rate_out_of_range", cost_usd: 0 });
  });
});
