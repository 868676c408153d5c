import type { AccessLogEntry, Provider } from "@agentnet/contracts";
import { Mistral } from "@mistralai/mistralai";
import type { CompletionEvent } from "@mistralai/mistralai/models/components";
import { describe, expect, it } from "vitest";
import type { Stack } from "../stack";
import type { SeenRequest } from "../upstream";
import { FakeMistral } from "../vendors/mistral";
import {
  accountWithProvider,
  distinctWords,
  expectAllowedRow,
  expectCutRow,
  expectVendorCredential,
  startVendorStack,
  storedRows,
  useWireStack,
} from "./wire-stack";

const MISTRAL_KEY = "mistral-provider-key";
const MODEL = "mistral-small-latest";
const USAGE = { input: 12_000, output: 3_000, cached: 0, creation: 0 };
/**
 * mistral-small-latest in the catalog: $0.10 per million input tokens, $0.30 per million output.
 * By hand: 12,000 × $0.10/M + 3,000 × $0.30/M = $0.0012 + $0.0009 = $0.0021.
 */
const EXPECTED_COST = 0.0021;

/** The stack with telemetry behind a fake Mistral, allowed as an upstream. */
async function startMistralStack() {
  const mistral = new FakeMistral(MISTRAL_KEY);
  const mistralUrl = await mistral.start();
  const stack = await startVendorStack(mistralUrl);
  const reset = () => {
    mistral.usage = { ...USAGE };
    mistral.reply = "Hello from Mistral";
  };
  const stop = async () => {
    await stack.stop();
    await mistral.stop();
  };
  return { stack, mistral, mistralUrl, reset, stop };
}

let stack: Stack;
let mistral: FakeMistral;
let mistralUrl: string;
useWireStack(startMistralStack, (started) => {
  ({ stack, mistral, mistralUrl } = started);
});

/**
 * A fresh account whose one policy grants a mistral_api provider at the fake vendor, priced by the
 * catalog, under a daily token cap per user (generous unless said).
 */
async function mistralAccount(options: { userCap?: number } = {}) {
  const granted = await accountWithProvider(
    stack,
    {
      provider_id: "mistral_api",
      name: "Mistral",
      upstream_url: `${mistralUrl}/v1`,
      api_key: MISTRAL_KEY,
    },
    options,
  );
  return { ...granted, seenBefore: mistral.seen.length };
}

/** Mistral's SDK, the gateway as its server URL, the agentnet token as its key. */
const client = (token: string) => new Mistral({ apiKey: token, serverURL: stack.proxy.url });

const expectMistralRow = (row: AccessLogEntry | undefined, provider: Provider, stream: boolean) =>
  expectAllowedRow(row, {
    provider,
    model: MODEL,
    stream,
    counts: { input_tokens: USAGE.input, output_tokens: USAGE.output },
    cost: EXPECTED_COST,
  });

/** Reads an SDK stream to its end: its text and its last finish_reason. */
async function drain(stream: AsyncIterable<CompletionEvent>) {
  let text = "";
  let finish: string | null | undefined;
  for await (const event of stream) {
    const content = event.data.choices[0]?.delta.content;
    text += typeof content === "string" ? content : "";
    finish = event.data.choices[0]?.finishReason ?? finish;
  }
  return { text, finish };
}

/** The vendor saw the provider's key on every request, and the agentnet token nowhere. */
const expectProviderKey = (seen: SeenRequest[], token: string) =>
  expectVendorCredential(
    seen,
    (request) => expect(request.headers.authorization).toBe(`Bearer ${MISTRAL_KEY}`),
    token,
  );

describe("@mistralai/mistralai through the gateway, a mistral_api provider", () => {
  it("chat.complete: the vendor's answer, one row with its counts and cost", async () => {
    const { account, provider, seenBefore } = await mistralAccount();

    const answer = await client(account.token).chat.complete({
      model: MODEL,
      messages: [{ role: "user", content: "say hi" }],
    });

    expect(answer.choices[0]?.message?.content).toBe(mistral.reply);
    const seen = mistral.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual(["/v1/chat/completions"]);
    expectProviderKey(seen, account.token);
    const [row, ...more] = await storedRows(stack, account, 1);
    expect(more).toEqual([]);
    expectMistralRow(row, provider, false);
  });

  it("chat.stream: the vendor's text; no stream_options sent, the usage read from the last chunk", async () => {
    const { account, provider, seenBefore } = await mistralAccount();
    mistral.reply = distinctWords(40);

    const stream = await client(account.token).chat.stream({
      model: MODEL,
      messages: [{ role: "user", content: "say hi" }],
    });
    const { text, finish } = await drain(stream);

    expect(text).toBe(mistral.reply);
    expect(finish).toBe("stop");
    const seen = mistral.seen.slice(seenBefore);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.body).not.toHaveProperty("stream_options");
    expectProviderKey(seen, account.token);
    const [row, ...more] = await storedRows(stack, account, 1);
    expect(more).toEqual([]);
    expectMistralRow(row, provider, true);
  });
});

describe("a Mistral SDK stream cut at a token cap", () => {
  it("ends without an error, its last chunk finishing with length", async () => {
    const cap = 3_000;
    const { account } = await mistralAccount({ userCap: cap });
    mistral.usage = { input: 50, output: 100_000, cached: 0, creation: 0 };
    mistral.reply = distinctWords(10_000, "w");

    const { text, finish } = await drain(
      await client(account.token).chat.stream({
        model: MODEL,
        messages: [{ role: "user", content: "write" }],
      }),
    );

    // The proxy ends a cut OpenAI-chat stream as the vendor ends one at max_tokens.
    expect(finish).toBe("length");
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(mistral.reply.length);
    const [row, ...more] = await storedRows(stack, account, 1);
    expect(more).toEqual([]);
    expectCutRow(row, cap);
  });
});
