import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure, openaiClient } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ proxy: { shutdownDrainMs: 500 } });
});
afterAll(async () => {
  stack.openai.holdStream = false;
  stack.openai.release();
  await stack?.stop();
});

describe("a clean shutdown of the proxy", () => {
  it("cuts a stream still running after the drain bound, charges it and publishes its event before it ends", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    stack.openai.usage = { input: 400, output: 50, cached: 0, creation: 0 };
    stack.openai.holdStream = true;
    const stream = await openaiClient(stack, account.token).chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "tell me a long story" }],
      stream: true,
    });
    const reading = (async () => {
      const seen: string[] = [];
      try {
        for await (const chunk of stream) seen.push(JSON.stringify(chunk));
      } catch {
        // The cut ends the stream early: that is the point.
      }
      return seen;
    })();

    const started = Date.now();
    await stack.proxy.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await reading).length).toBeGreaterThan(0);
    const [event] = await account.events.waitFor(1);
    // Charged as an interrupted stream: at least the prompt estimate, at most what it had streamed.
    expect(event).toMatchObject({ decision: "allow", stream: true });
    expect(event?.input_tokens).toBeGreaterThan(0);
  });
});
