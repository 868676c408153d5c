import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eventually } from "@agentnet/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { keptEvents } from "../test-support/requests";
import { ScriptedVendor } from "../test-support/vendor";

let harness: ProxyHarness | undefined;
let vendor: ScriptedVendor | undefined;
let brokenVendor: Server | undefined;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  await vendor?.stop();
  vendor = undefined;
  brokenVendor?.closeAllConnections();
  await new Promise((resolve) => brokenVendor?.close(resolve) ?? resolve(undefined));
  brokenVendor = undefined;
});

/** A chat completion of about `megabytes` MB: more than a client's socket takes before it reads. */
function largeCompletion(megabytes: number) {
  return {
    id: "chatcmpl-large",
    object: "chat.completion",
    model: "gpt-4o",
    choices: [{ index: 0, message: { role: "assistant", content: "x".repeat(megabytes * 2 ** 20) } }],
    usage: { prompt_tokens: 13, completion_tokens: 9, total_tokens: 22 },
  };
}

/** A non-streamed chat completion sent through the proxy; its answer is left unread until asked. */
function unreadAnswer(proxyUrl: string, token: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${proxyUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    });
    req.once("response", (res) => {
      res.pause();
      resolve(res);
    });
    req.once("error", reject);
    req.end(JSON.stringify({ model: "gpt-4o", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }));
  });
}

async function proxyWithLargeAnswers(name: string, megabytes: number) {
  const kept = keptEvents();
  harness = await startProxyHarness(name, { publish: kept.publish });
  vendor = new ScriptedVendor();
  vendor.always = { kind: "status", status: 200, body: largeCompletion(megabytes) };
  const url = await vendor.start();
  const { accountId, token } = harness.accountWith([
    { provider_id: "openai_api", upstream_url: `${url}/v1`, key: "sk-test" },
  ]);
  return { kept, accountId, token, proxyUrl: harness.proxy.url };
}

describe("relaying a whole answer larger than the client's socket takes", () => {
  it("waits for a client that reads late, then relays every byte and rows the answer's usage", async () => {
    const { kept, accountId, token, proxyUrl } = await proxyWithLargeAnswers("relay-late-reader", 12);
    const res = await unreadAnswer(proxyUrl, token);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const parts: Buffer[] = [];
    for await (const chunk of res) parts.push(chunk as Buffer);
    const answer = JSON.parse(Buffer.concat(parts).toString("utf8"));

    expect(res.statusCode).toBe(200);
    expect(answer).toEqual(largeCompletion(12));
    await eventually(() => kept.of(accountId).length === 1, 10_000);
    expect(kept.of(accountId)[0]).toMatchObject({ status_code: 200, input_tokens: 13, output_tokens: 9 });
  }, 60_000);

  it("rows a client that leaves while the relay waits for it to read as a client that left (499)", async () => {
    const { kept, accountId, token, proxyUrl } = await proxyWithLargeAnswers("relay-reader-leaves", 24);
    const res = await unreadAnswer(proxyUrl, token);
    await new Promise((resolve) => setTimeout(resolve, 500));
    res.destroy();

    await eventually(() => kept.of(accountId).length === 1, 10_000);
    expect(kept.of(accountId)[0]).toMatchObject({ status_code: 499 });
  }, 60_000);

  it("rows an answer the vendor breaks off mid-way as a bad gateway (502), its client's connection ended", async () => {
    const kept = keptEvents();
    harness = await startProxyHarness("relay-vendor-breaks", { publish: kept.publish });
    brokenVendor = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json", "content-length": String(8 * 2 ** 20) });
      res.write(`{"id":"chatcmpl-broken","choices":[{"message":{"content":"${"x".repeat(2 ** 20)}`, () =>
        res.destroy(),
      );
    });
    await new Promise<void>((resolve) => brokenVendor?.listen(0, "127.0.0.1", resolve));
    const { port } = brokenVendor.address() as AddressInfo;
    const { accountId, token } = harness.accountWith([
      { provider_id: "openai_api", upstream_url: `http://127.0.0.1:${port}/v1`, key: "sk-test" },
    ]);
    const res = await unreadAnswer(harness.proxy.url, token);
    const ended = new Promise((resolve) => res.once("close", resolve));
    res.resume();
    await ended;

    expect(res.complete).toBe(false);
    await eventually(() => kept.of(accountId).length === 1, 10_000);
    expect(kept.of(accountId)[0]).toMatchObject({ status_code: 502 });
  }, 60_000);
});
