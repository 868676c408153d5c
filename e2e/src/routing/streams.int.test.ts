import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicClient, openaiClient } from "../setup";
import { type RoutingStack, rowsOnceStored, startRoutingStack } from "./routing-stack";

/** The proxy gives up on a vendor that sent no response headers in this long. */
const HEADERS_TIMEOUT_MS = 1_500;

let routing: RoutingStack;
beforeAll(async () => {
  routing = await startRoutingStack({ proxy: { headersTimeoutMs: HEADERS_TIMEOUT_MS } });
});
afterAll(() => routing?.stop());
beforeEach(() => {
  routing.failing.openai.recover();
  routing.failing.anthropic.recover();
});

const usage = { input: 100, output: 20, cached: 0, creation: 0 };

describe("streams fail over only before their first byte", () => {
  it("a stream that dies before its first byte is answered by the next provider", async () => {
    const { account, first, second } = await routing.twoProviders("anthropic");
    routing.healthy.anthropic.usage = usage;
    routing.failing.anthropic.failNext(1, { kind: "cut_before_first_byte" });
    const client = anthropicClient(routing.stack, account.token);

    const stream = await client.messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    let text = "";
    for await (const event of stream)
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
    expect(text).toBe(routing.healthy.anthropic.reply);

    const { rows } = await rowsOnceStored(routing, account, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      resolved_provider_id: second.id,
      stream: true,
      input_tokens: usage.input,
      output_tokens: usage.output,
    });
    expect(rows[0]?.attempts?.map((attempt) => attempt.provider_id)).toEqual([first.id, second.id]);
    expect(rows[0]?.attempts?.[0]?.error).not.toBe("");
  });

  it("a stream that dies after its first byte is not replayed: the client sees the cut, one row", async () => {
    const { account, first } = await routing.twoProviders("openai");
    routing.failing.openai.failNext(1, { kind: "cut_after_first_byte" });
    const seenByHealthy = routing.healthy.openai.seen.length;
    const client = openaiClient(routing.stack, account.token);

    const stream = await client.chat.completions.create({
      model: "gpt-4o",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    let text = "";
    let cut: unknown;
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    } catch (error) {
      cut = error;
    }
    expect(text).toBe("Partial");
    expect(cut).toBeDefined();
    expect(routing.healthy.openai.seen.length).toBe(seenByHealthy);

    const { rows, total } = await rowsOnceStored(routing, account, 1);
    expect(total).toBe(1);
    expect(rows[0]).toMatchObject({ resolved_provider_id: first.id, stream: true });
    expect(rows[0]?.attempts ?? []).toHaveLength(0);
  });

  it("a vendor silent past the headers timeout is left for the next provider", async () => {
    const { account, first, second } = await routing.twoProviders("openai");
    routing.healthy.openai.usage = usage;
    routing.failing.openai.failNext(1, { kind: "slow_first_byte", delayMs: HEADERS_TIMEOUT_MS * 4 });
    const client = openaiClient(routing.stack, account.token);

    const startedAt = Date.now();
    const answer = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(answer.choices[0]?.message.content).toBe(routing.healthy.openai.reply);
    expect(Date.now() - startedAt).toBeLessThan(HEADERS_TIMEOUT_MS * 3);

    const { rows } = await rowsOnceStored(routing, account, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ resolved_provider_id: second.id, input_tokens: usage.input });
    const [timedOut, answered] = rows[0]?.attempts ?? [];
    expect(timedOut).toMatchObject({ provider_id: first.id, status: 0 });
    expect(timedOut?.duration_ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(answered).toMatchObject({ provider_id: second.id, status: 200 });
  });
});
