import { type AccessLogPage, PROXY_LOST_REASON, PROXY_LOST_STATUS } from "@agentnet/contracts";
import { eventually } from "@agentnet/testkit";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startProxyProcess } from "../proxy-process";
import { clearOfHourEnd, configure, readUntil, userCounter } from "../setup";
import { type Stack, startStack } from "../stack";

const LOST_AFTER_MS = 1_000;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    telemetry: true,
    consumption: { admissionOrphanMs: LOST_AFTER_MS, admissionSweepMs: 100 },
  });
});
afterAll(async () => {
  await stack?.stop();
});
// Counters and Retry-After are per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);

/** 400 characters of prompt: the proxy's estimate is ceil(JSON of the messages / 4) tokens. */
const PROMPT = "p".repeat(400);
const PROMPT_ESTIMATE = Math.ceil(JSON.stringify([{ role: "user", content: PROMPT }]).length / 4);

describe("a proxy that dies mid-request", () => {
  it("leaves every request it admitted a row and usage at the admitted estimate, and no stuck hold", async () => {
    const account = await stack.newAccount({ enable_log_collection: true });
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 100_000, window_seconds: 3600 },
    });
    const proxy = await startProxyProcess(stack.vendorUpstreams, { AGN_PROXY_HEARTBEAT_SECONDS: "0.2" });
    const client = new OpenAI({ apiKey: account.token, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
    stack.openai.holdStream = true;
    const seenBefore = stack.openai.seen.length;
    const streams = [300, 2_000, 5_000].map((maxTokens) =>
      client.chat.completions
        .create({
          model: "gpt-4o",
          messages: [{ role: "user", content: PROMPT }],
          max_tokens: maxTokens,
          stream: true,
        })
        .then(async (stream) => {
          for await (const _chunk of stream);
        })
        .catch((error: unknown) => error),
    );
    // Every stream has started at the vendor (which bills it) when the proxy dies.
    await eventually(() => stack.openai.seen.length >= seenBefore + 3);
    await proxy.crash();
    stack.openai.holdStream = false;
    stack.openai.release();
    for (const outcome of await Promise.all(streams)) expect(outcome).toBeInstanceOf(Error);

    // The consumption leader publishes each admission once the proxy has been silent long enough.
    const events = await account.events.waitFor(3, 10_000);
    expect(events).toHaveLength(3);
    for (const event of events) {
      expect(event).toMatchObject({
        decision: "allow",
        deny_reason: PROXY_LOST_REASON,
        status_code: PROXY_LOST_STATUS,
        stream: true,
        input_tokens: PROMPT_ESTIMATE,
      });
      expect(event.cost_usd).toBeGreaterThan(0);
    }
    // A stream is admitted with its first output step (1,024 tokens) or its own cap if smaller.
    expect(events.map((event) => event.output_tokens).sort((a, b) => a - b)).toEqual([300, 1_024, 1_024]);

    const charged = events.reduce((total, event) => total + event.input_tokens + event.output_tokens, 0);
    const counter = await readUntil(
      () => userCounter(stack, account.token),
      (entry) => entry !== undefined && entry.tokens_input + entry.tokens_output === charged,
    );
    expect(counter?.tokens_input).toBe(3 * PROMPT_ESTIMATE);
    const logs = await readUntil(
      () => account.must(stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)),
      (page) => page.total_records === 3,
    );
    expect(new Set(logs.data.map((entry) => entry.id))).toEqual(new Set(events.map((event) => event.id)));

    // Nothing of the dead proxy holds the cap: a fresh proxy serves at once.
    const fresh = await startProxyProcess(stack.vendorUpstreams);
    try {
      const answer = await new OpenAI({
        apiKey: account.token,
        baseURL: `${fresh.url}/v1`,
        maxRetries: 0,
      }).chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 10,
      });
      expect(answer.choices[0]?.message.content).toBe(stack.openai.reply);
    } finally {
      await fresh.stop();
    }
  });

  it("adds nothing for requests the proxy finished before it died", async () => {
    const account = await stack.newAccount({ enable_log_collection: true });
    await configure(stack, account).policy([account.openaiProvider.id]);
    const proxy = await startProxyProcess(stack.vendorUpstreams, { AGN_PROXY_HEARTBEAT_SECONDS: "0.2" });
    const client = new OpenAI({ apiKey: account.token, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 5; i++) {
      await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    }
    await account.events.waitFor(5);
    await proxy.crash();
    await new Promise((resolve) => setTimeout(resolve, LOST_AFTER_MS + 1_000));
    // Read from the stream's side (telemetry): an admission published while its request's own
    // event was not yet settled is dropped there by its Nats-Msg-Id.
    const logs = await readUntil(
      () => account.must(stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)),
      (page) => page.total_records === 5,
    );
    expect(logs.data.map((entry) => [entry.status_code, entry.deny_reason])).toEqual(
      Array.from({ length: 5 }, () => [200, ""]),
    );
  });
});
