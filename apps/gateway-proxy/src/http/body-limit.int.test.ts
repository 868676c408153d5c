import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { keptEvents } from "../test-support/requests";

/** The body limit over HTTP/1.1 (over h2c: ingress-http2.int.test.ts). */

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
