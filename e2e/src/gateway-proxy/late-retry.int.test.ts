import { DEFAULT_REQUEST_STREAM_LIMITS, publishEvent } from "@agentnet/bus";
import type { GatewayRequestEvent } from "@agentnet/contracts";
import { eventually } from "@agentnet/testkit";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { clearOfHourEnd, configure, readUntil, userCounter } from "../setup";
import { type Stack, startStack } from "../stack";

/**
 * The request stream's duplicate window and consumption's memory of settled ids are both made
 * short (1 s), and each event's first publish hangs past them before it fails: as after an outage
 * longer than the window. Without the proxy's stored check, an event stored on that first attempt
 * would be stored and counted again.
 */
const WINDOW_MS = 1_000;
const FIRST_ATTEMPT_HANGS_MS = 3_000;
const requestStream = { ...DEFAULT_REQUEST_STREAM_LIMITS, duplicateWindowMs: WINDOW_MS };

/** What the first attempt at an event does before it fails: store it (its ack then lost), or not. */
let firstAttempt: "stored" | "not stored" = "stored";
const attempts = new Map<string, number>();

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    telemetry: { requestStream },
    // Settled ids are remembered 4 × ack wait (1 s) or the window, whichever is longer.
    consumption: { requestStream, ackWaitMs: 250 },
    proxy: {
      requestStream,
      publish: async (subject, event, msgId) => {
        const attempt = (attempts.get(msgId) ?? 0) + 1;
        attempts.set(msgId, attempt);
        if (attempt > 1) return publishEvent(stack.nc, subject, event, msgId);
        if (firstAttempt === "stored") await publishEvent(stack.nc, subject, event, msgId);
        await new Promise((resolve) => setTimeout(resolve, FIRST_ATTEMPT_HANGS_MS));
        throw new Error("publish timed out");
      },
    },
  });
});
afterAll(async () => {
  await stack?.stop();
});
// Counters and Retry-After are per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);

describe("an event published again after the stream's duplicate window", () => {
  it("is not stored again when its first attempt was stored, and is published when it was not", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 1_000_000, window_seconds: 3600 },
    });
    const client = new OpenAI({ apiKey: account.token, baseURL: `${stack.proxy.url}/v1`, maxRetries: 0 });
    const ask = () =>
      client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });

    await ask();
    await eventually(() => attempts.size === 1);
    firstAttempt = "not stored";
    await ask();
    await eventually(() => attempts.size === 2);

    await eventually(() => stack.proxy.publisher.pending === 0, 20_000);
    expect(stack.proxy.publisher.status()).toMatchObject({ found_stored: 1, awaiting_stored_check: 0 });
    // The stored one went out once, the other twice (its first attempt never reached the server).
    expect([...attempts.values()].sort()).toEqual([1, 2]);

    const served = new Map<string, GatewayRequestEvent>();
    for (const event of account.events.events) served.set(event.id, event);
    expect(served.size).toBe(2);
    const tokens = [...served.values()].reduce((sum, e) => sum + e.input_tokens + e.output_tokens, 0);
    const counted = () => userCounter(stack, account.token);
    await readUntil(
      counted,
      (entry) => entry !== undefined && entry.tokens_input + entry.tokens_output === tokens,
    );
    // Longer than settlement takes: a second copy would have been counted by now.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const counter = await counted();
    expect((counter?.tokens_input ?? 0) + (counter?.tokens_output ?? 0)).toBe(tokens);
  });
});
