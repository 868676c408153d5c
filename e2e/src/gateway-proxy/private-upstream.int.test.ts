import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Account, configure, openaiClient } from "../setup";
import { type Stack, startStack } from "../stack";
import { FakeUpstream } from "../upstream";

let stack: Stack;
/** A service on the proxy's host that no provider is allowed to reach (say, an internal API). */
let internal: FakeUpstream;
let internalPort: string;
beforeAll(async () => {
  // Default options: the stack allows its two fake vendors by address and port, nothing else.
  stack = await startStack();
  internal = new FakeUpstream();
  internalPort = new URL(await internal.start()).port;
});
afterAll(async () => {
  await internal?.stop();
  await stack?.stop();
});

/** Points the account's OpenAI provider at `upstreamUrl` through the API, as its admin would. */
async function pointAt(account: Account, upstreamUrl: string) {
  const provider = account.openaiProvider;
  await account.must(
    stack.api("PUT", `/agent-network/providers/${provider.id}`, account.token, {
      provider_id: provider.provider_id,
      name: provider.name,
      upstream_url: upstreamUrl,
    }),
  );
}

const ask = (account: Account) =>
  openaiClient(stack, account.token)
    .chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })
    .catch((error: unknown) => error);

describe("the proxy refuses private upstreams by default (AGN_REFUSE_PRIVATE_UPSTREAMS)", () => {
  it("refuses every spelling of the host's own loopback, literal or by name, sends nothing, and logs a row", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const spellings = [
      `http://127.0.0.1:${internalPort}/v1`,
      `http://2130706433:${internalPort}/v1`,
      `http://0x7f000001:${internalPort}/v1`,
      `http://127.1:${internalPort}/v1`,
      `http://0177.0.0.1:${internalPort}/v1`,
      `http://0.0.0.0:${internalPort}/v1`,
      `http://[::ffff:127.0.0.1]:${internalPort}/v1`,
      `http://[::1]:${internalPort}/v1`,
      `http://localhost:${internalPort}/v1`,
      // The API on the same host: an admin must not make the proxy POST to it and relay the answer.
      `${stack.apiUrl}/api`,
    ];
    for (const upstreamUrl of spellings) {
      await pointAt(account, upstreamUrl);
      const refused = await ask(account);
      expect(refused, upstreamUrl).toMatchObject({ status: 403, code: "provider.private_upstream" });
      expect(String((refused as Error).message)).toMatch(
        /is a private address.*AGN_ALLOWED_PRIVATE_UPSTREAMS/,
      );
    }
    expect(internal.seen).toEqual([]);

    const events = await account.events.waitFor(spellings.length);
    for (const event of events) {
      expect(event).toMatchObject({ status_code: 403, deny_reason: "provider.private_upstream" });
    }
  });

  it("names the refused host in the vendor's error shape", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    await pointAt(account, `http://2130706433:${internalPort}/v1`);
    const response = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("x-agentnet-reason")).toBe("provider.private_upstream");
    const body = (await response.json()) as { error: { message: string; code: string } };
    expect(body.error.code).toBe("provider.private_upstream");
    expect(body.error.message).toContain("(127.0.0.1)");
  });

  it("serves an upstream the allowance names by address and port, and only at that port", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const answer = await ask(account);
    expect(answer).toMatchObject({ choices: [{ message: { content: stack.openai.reply } }] });

    // The allowed vendor's address at another port is the internal service: refused.
    await pointAt(account, `http://127.0.0.1:${internalPort}/v1`);
    expect(await ask(account)).toMatchObject({ status: 403 });
    expect(internal.seen).toEqual([]);
  });
});
