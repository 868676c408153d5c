import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure, openaiClient } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  // Callers are cached 100 ms: past that, every request asks the control-plane again.
  stack = await startStack({ proxy: { authCacheMs: 100, snapshotMaxAgeMs: 100, staleServeMs: 60_000 } });
});
afterAll(async () => {
  await stack?.stop();
});

describe("the proxy through a control-plane outage", () => {
  it("keeps serving known callers from their last good answer, and refuses what it cannot decide", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const other = await stack.newAccount();
    const ask = (token: string) =>
      openaiClient(stack, token).chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
      });
    await ask(account.token);

    await stack.crashControlPlane();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Caller and snapshot are past their cache age: both refreshes fail, the last answers serve.
    for (let i = 0; i < 3; i++)
      await expect(ask(account.token)).resolves.toMatchObject({ object: "chat.completion" });
    // A token this proxy never resolved cannot be decided while the control-plane is away.
    await expect(ask(other.token)).rejects.toMatchObject({ status: 503, code: "auth.unavailable" });
    const events = await account.events.waitFor(4);
    expect(events.every((event) => event.decision === "allow")).toBe(true);
  });
});
