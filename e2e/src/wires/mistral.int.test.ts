import type { AccessLogEntry, Provider } from "@agentnet/contracts";
import { Mistral } from "@mistralai/mistralai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { clearOfHourEnd, configure } from "../setup";
import { type Stack, startStack } from "../stack";
import type { SeenRequest } from "../upstream";
import { FakeMistral } from "../vendors/mistral";
import { storedRows } from "./azure-stack";

const MISTRAL_KEY = "mistral-provider-key";
const MODEL = "mistral-small-latest";
const USAGE = { input: 12_000, output: 3_000, cached: 0, creation: 0 };
/**
 * mistral-small-latest in the catalog: $0.10 per million input tokens, $0.30 per million output.
 * By hand: 12,000 × $0.10/M + 3,000 × $0.30/M = $0.0012 + $0.0009 = $0.0021.
 */
const EXPECTED_COST = 0.0021;

let stack: Stack;
let mistral: FakeMistral;
let mistralUrl: string;
beforeAll(async () => {
  mistral = new FakeMistral(MISTRAL_KEY);
  mistralUrl = await mistral.start();
  stack = await startStack({
    telemetry: true,
    proxy: { allowedPrivateUpstreams: [new URL(mistralUrl).host] },
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await mistral?.stop();
});
// The token cap's window is a day: no test straddles its end (an hour's end is the safe bound).
beforeEach(() => clearOfHourEnd(), 30_000);
beforeEach(() => {
  mistral.usage = { ...USAGE };
  mistral.reply = "Hello from Mistral";
});

/** A fresh account whose one policy grants a mistral_api provider at the fake vendor, priced by the catalog. */
async function mistralAccount() {
  const account = await stack.newAccount();
  const provider = await account.must(
    stack.api<Provider>("POST", "/agent-network/providers", account.token, {
      provider_id: "mistral_api",
      name: "Mistral",
      upstream_url: `${mistralUrl}/v1`,
      api_key: MISTRAL_KEY,
    }),
  );
  const setup = configure(stack, account);
  await setup.policy([provider.id]);
  await setup.budgetRule({
    token_limit: { enabled: true, group_cap: 0, user_cap: 100_000_000, window_seconds: 86_400 },
  });
  return { account, provider, seenBefore: mistral.seen.length };
}

/** Mistral's SDK, the gateway as its server URL, the agentnet token as its key. */
const client = (token: string) => new Mistral({ apiKey: token, serverURL: stack.proxy.url });

function expectPricedRow(row: AccessLogEntry | undefined, provider: Provider, stream: boolean) {
  expect(row).toMatchObject({
    decision: "allow",
    status_code: 200,
    resolved_provider_id: provider.id,
    model: MODEL,
    stream,
    input_tokens: USAGE.input,
    output_tokens: USAGE.output,
  });
  expect(row?.cost_usd).toBeCloseTo(EXPECTED_COST, 9);
}

/** The vendor saw the provider's key on every request, and the agentnet token nowhere. */
function expectProviderKey(seen: SeenRequest[], token: string) {
  expect(seen.length).toBeGreaterThan(0);
  for (const request of seen) {
    expect(request.headers.authorization).toBe(`Bearer ${MISTRAL_KEY}`);
    expect(JSON.stringify([request.headers, request.query, request.body])).not.toContain(token);
  }
}

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
    expectPricedRow(row, provider, false);
  });

  it("chat.stream: the vendor's text; no stream_options sent, the usage read from the last chunk", async () => {
    const { account, provider, seenBefore } = await mistralAccount();
    mistral.reply = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");

    const stream = await client(account.token).chat.stream({
      model: MODEL,
      messages: [{ role: "user", content: "say hi" }],
    });
    let text = "";
    let finish: string | null | undefined;
    for await (const event of stream) {
      const content = event.data.choices[0]?.delta.content;
      text += typeof content === "string" ? content : "";
      finish = event.data.choices[0]?.finishReason ?? finish;
    }

    expect(text).toBe(mistral.reply);
    expect(finish).toBe("stop");
    const seen = mistral.seen.slice(seenBefore);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.body).not.toHaveProperty("stream_options");
    expectProviderKey(seen, account.token);
    const [row, ...more] = await storedRows(stack, account, 1);
    expect(more).toEqual([]);
    expectPricedRow(row, provider, true);
  });
});
