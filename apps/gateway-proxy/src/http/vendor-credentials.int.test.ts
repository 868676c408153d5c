import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  bearerTokenOf,
  type EntraTokenServer,
  type GoogleTokenServer,
  startEntraTokenServer,
  startGoogleTokenServer,
} from "@agentnet/testkit/oauth-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";

/**
 * Keys the proxy exchanges for tokens, end to end through the proxy: a Vertex provider holding a
 * service-account key and an Azure provider holding Entra ID client credentials, each behind a
 * local vendor that takes only a token the local token endpoint minted and has not expired.
 */

let harness: ProxyHarness;
let google: GoogleTokenServer;
let entra: EntraTokenServer;
const servers: Server[] = [];

interface Seen {
  path: string;
  authorization: string | undefined;
  apiKey: string | undefined;
}

/** A local vendor answering `answer` to requests whose bearer token `accepts` takes; 401 otherwise. */
async function startVendor(accepts: (token: string | undefined) => boolean, answer: unknown) {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on("end", () => {
      const header = (name: string) => req.headers[name] as string | undefined;
      seen.push({ path: req.url ?? "", authorization: header("authorization"), apiKey: header("api-key") });
      const ok = accepts(bearerTokenOf(req));
      res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
      res.end(JSON.stringify(ok ? answer : { error: { code: 401, message: "invalid credentials" } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

beforeAll(async () => {
  google = await startGoogleTokenServer();
  entra = await startEntraTokenServer();
  harness = await startProxyHarness("vendor-credentials-test", {
    // The vendors and token endpoints are on loopback, which the harness lets the proxy reach.
    vendorCredentials: { trustedCa: entra.ca, refreshBeforeMs: 1_500, expiryMarginMs: 300 },
  });
});

afterAll(async () => {
  await harness?.stop();
  for (const server of servers) server.close();
  await google?.close();
  await entra?.close();
});

/** An account with one provider holding `key`, and its caller's agentnet token. */
const accountWith = (catalogId: string, upstreamUrl: string, key: string) =>
  harness.accountWith([{ provider_id: catalogId, upstream_url: upstreamUrl, key }]).token;

const GEMINI_ANSWER = {
  candidates: [{ content: { role: "model", parts: [{ text: "hello from vertex" }] }, finishReason: "STOP" }],
  usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 },
};

const CHAT_ANSWER = {
  id: "chatcmpl-1",
  object: "chat.completion",
  model: "gpt-4o",
  choices: [{ index: 0, message: { role: "assistant", content: "hello from azure" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
};

describe("the proxy's credentials for keys exchanged for tokens", () => {
  it("a Vertex service-account key: the vendor sees a minted token, refreshed as it expires, no request failing", async () => {
    const vertex = await startVendor((token) => google.accepts(token), GEMINI_ANSWER);
    const account = google.serviceAccount();
    const token = accountWith(
      "vertex_api",
      `${vertex.url}/v1/projects/p1/locations/us-central1`,
      account.json,
    );
    google.lifetimeSeconds = 2.5;
    try {
      const statuses: number[] = [];
      const until = Date.now() + 5_000;
      while (Date.now() < until) {
        const res = await fetch(
          `${harness.proxy.url}/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent`,
          {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
          },
        );
        statuses.push(res.status);
        await res.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(new Set(statuses)).toEqual(new Set([200]));
      expect(vertex.seen[0]?.path).toBe(
        "/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
      );
      // Every request carried a token minted for the key's service account, never the agentnet token.
      const tokens = new Set(vertex.seen.map((seen) => seen.authorization));
      expect(tokens.has(`Bearer ${token}`)).toBe(false);
      expect(google.mints.filter((email) => email === account.email).length).toBeGreaterThanOrEqual(3);
      expect(tokens.size).toBeGreaterThanOrEqual(3);
    } finally {
      google.lifetimeSeconds = 3600;
    }
  });

  it("an Azure provider with Entra ID client credentials: Authorization: Bearer instead of api-key", async () => {
    const azure = await startVendor((token) => entra.accepts(token), CHAT_ANSWER);
    const app = entra.client();
    const token = accountWith("azure_api", `${azure.url}/openai/v1`, app.json);
    const res = await fetch(`${harness.proxy.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "api-key": token, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const [seen] = azure.seen;
    expect(seen?.path).toBe("/openai/v1/chat/completions");
    expect(entra.subjectOf(seen?.authorization)).toBe(app.credentials.client_id);
    expect(seen?.apiKey).toBeUndefined();
  });

  it("a key that cannot mint is 502 provider.credential_unavailable, the vendor never called", async () => {
    const vertex = await startVendor((token) => google.accepts(token), GEMINI_ANSWER);
    const account = google.serviceAccount();
    google.revoke(account.email);
    const token = accountWith(
      "vertex_api",
      `${vertex.url}/v1/projects/p1/locations/us-central1`,
      account.json,
    );
    const res = await fetch(
      `${harness.proxy.url}/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
      },
    );
    expect(res.status).toBe(502);
    expect(JSON.stringify(await res.json())).toMatch(/could not be minted/);
    expect(vertex.seen).toHaveLength(0);
  });
});
