import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure, openaiClient } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ proxy: { refusePrivateUpstreams: true } });
});
afterAll(async () => {
  await stack?.stop();
});

describe("a shared deployment refuses private upstreams (AGN_REFUSE_PRIVATE_UPSTREAMS)", () => {
  it("refuses an upstream at a loopback address, literal or by name, and sends it nothing", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const client = openaiClient(stack, account.token);
    const ask = () =>
      client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    let seenBefore = stack.openai.seen.length;

    const literal = await ask().catch((error: unknown) => error);
    expect(literal).toMatchObject({ status: 403, code: "provider.private_upstream" });
    expect(String((literal as Error).message)).toMatch(/127\.0\.0\.1.*private address/);

    // A name resolving to loopback is checked on the address the socket would connect to.
    expect(stack.openai.seen.length).toBe(seenBefore);
    const provider = account.openaiProvider;
    const port = new URL(provider.upstream_url).port;
    await account.must(
      stack.api("PUT", `/agent-network/providers/${provider.id}`, account.token, {
        provider_id: provider.provider_id,
        name: provider.name,
        upstream_url: `http://localhost:${port}/v1`,
      }),
    );
    seenBefore = stack.openai.seen.length;
    const byName = await ask().catch((error: unknown) => error);
    expect(byName).toMatchObject({ status: 403, code: "provider.private_upstream" });

    expect(stack.openai.seen.length).toBe(seenBefore);
    const [first] = await account.events.waitFor(2);
    expect(first).toMatchObject({ status_code: 403, deny_reason: "provider.private_upstream" });
  });
});
