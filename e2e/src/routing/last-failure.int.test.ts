import type { APIError } from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { overloaded } from "../failing-vendor";
import { anthropicClient, openaiClient, userCounter } from "../setup";
import { type RoutingStack, rowsOnceStored, startRoutingStack } from "./routing-stack";

let routing: RoutingStack;
beforeAll(async () => {
  routing = await startRoutingStack();
});
afterAll(() => routing?.stop());
beforeEach(() => {
  routing.failing.openai.recover();
  routing.failing.anthropic.recover();
});

const usage = { input: 100, output: 20, cached: 0, creation: 0 };

describe("when every attempt fails, the client gets the last failure in its wire, and one row", () => {
  it("two overloaded providers: a 529 overloaded_error in Anthropic's format, nothing charged", async () => {
    const vendor = routing.failingUrls.anthropic;
    const { account, providers } = await routing.onlyProvidersAt("anthropic", [vendor, vendor]);
    routing.failing.anthropic.failAlways(overloaded);
    const client = anthropicClient(routing.stack, account.token);

    await expect(
      client.messages.create({
        model: "claude-sonnet-4-6",
        max_tokens: 100,
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({ status: 529, error: { type: "error", error: { type: "overloaded_error" } } });

    const { rows, total } = await rowsOnceStored(routing, account, 1);
    expect(total).toBe(1);
    expect(rows[0]).toMatchObject({ status_code: 529, input_tokens: 0, output_tokens: 0, cost_usd: 0 });
    expect(rows[0]?.attempts?.map((attempt) => [attempt.provider_id, attempt.status])).toEqual(
      providers.map((provider) => [provider.id, 529]),
    );
    expect((await userCounter(routing.stack, account.token))?.tokens_input ?? 0).toBe(0);
  });

  it("two refusing providers: a 502 in OpenAI's format, the refusals listed", async () => {
    const refused = routing.refusedUrl;
    const { account, providers } = await routing.onlyProvidersAt("openai", [refused, refused]);
    const client = openaiClient(routing.stack, account.token);

    const failure = await client.chat.completions
      .create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })
      .catch((error: APIError) => error);
    expect(failure).toMatchObject({ status: 502, error: { message: expect.any(String) } });

    const { rows } = await rowsOnceStored(routing, account, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.status_code).toBe(502);
    expect(rows[0]?.attempts?.map((attempt) => [attempt.provider_id, attempt.status, attempt.error])).toEqual(
      providers.map((provider) => [provider.id, 0, "connect_failed"]),
    );
  });

  it("two rate-limited providers: the 429 with the vendor's retry-after", async () => {
    const vendor = routing.failingUrls.openai;
    const { account } = await routing.onlyProvidersAt("openai", [vendor, vendor]);
    routing.failing.openai.failNext(2, { kind: "status", status: 429, retryAfterSeconds: 7 });
    const client = openaiClient(routing.stack, account.token);

    const failure = await client.chat.completions
      .create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })
      .catch((error: APIError) => error);
    expect(failure).toMatchObject({ status: 429 });
    expect((failure as APIError).headers?.get("retry-after")).toBe("7");
  });
});

describe("a lone provider is tried again after the wait it asked for", () => {
  it("a 429 with retry-after-ms is retried on the same provider after that wait, and answered", async () => {
    const { account, providers } = await routing.onlyProvidersAt("openai", [routing.failingUrls.openai]);
    routing.failing.openai.usage = usage;
    routing.failing.openai.failNext(1, { kind: "status", status: 429, retryAfterMs: 800 });
    const client = openaiClient(routing.stack, account.token);

    const startedAt = Date.now();
    const answer = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(answer.choices[0]?.message.content).toBe(routing.failing.openai.reply);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(800);

    const { rows } = await rowsOnceStored(routing, account, 1);
    expect(rows).toHaveLength(1);
    const only = providers[0]?.id;
    expect(rows[0]).toMatchObject({
      status_code: 200,
      resolved_provider_id: only,
      input_tokens: usage.input,
    });
    expect(rows[0]?.attempts?.map((attempt) => [attempt.provider_id, attempt.status])).toEqual([
      [only, 429],
      [only, 200],
    ]);
  });
});
