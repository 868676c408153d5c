import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { keptEvents } from "../test-support/requests";
import { readBody } from "./body";

/** Reading a request body over HTTP/1.1 (the limit over h2c: ingress-http2.int.test.ts). */

const BODY_LIMIT_BYTES = 64 * 1024;

let harness: ProxyHarness;
const kept = keptEvents();

beforeAll(async () => {
  harness = await startProxyHarness("body-limit-test", {
    publish: kept.publish,
    bodyLimitBytes: BODY_LIMIT_BYTES,
  });
});
afterAll(async () => {
  await harness?.stop();
});

/** Sends `parts` as a chunked body it never ends; resolves with the answer. */
function postUnended(token: string, parts: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${harness.proxy.url}/v1/chat/completions`, {
      method: "POST",
      agent: false,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body });
        req.destroy();
      });
    });
    for (const part of parts) req.write(part);
  });
}

describe("a chunked HTTP/1.1 body", () => {
  it("past the limit is answered 413 as it is read, before its end", async () => {
    const { token } = harness.accountWith([
      { provider_id: "openai_api", upstream_url: "http://127.0.0.1:9/v1", key: "sk-test" },
    ]);
    const head = '{"model":"gpt-4o","messages":[{"role":"user","content":"';
    const answer = await postUnended(token, [
      head,
      "x".repeat(BODY_LIMIT_BYTES),
      "x".repeat(BODY_LIMIT_BYTES),
    ]);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "request.too_large" } });
  });
});

describe("readBody", () => {
  it("rejects at once a request whose client left before its body was read", async () => {
    let outcome: (value: unknown) => void = () => undefined;
    const read = new Promise<unknown>((resolve) => {
      outcome = resolve;
    });
    // The handler reads only once the request has closed, as a proxy still authenticating would.
    const server = createServer((req) => {
      req.once("close", () => {
        readBody(req, 1_000)
          .then(
            () => "resolved",
            (error: unknown) => error,
          )
          .then(outcome);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = request({ host: "127.0.0.1", port, method: "POST", path: "/", agent: false });
    client.on("error", () => undefined);
    client.write('{"model":');
    await new Promise((resolve) => setTimeout(resolve, 50));
    client.destroy();
    try {
      expect(await read).toBeInstanceOf(Error);
    } finally {
      server.close();
    }
  });
});
