import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { NatsConnection, Subscription } from "@agentnet/bus";
import { serve } from "@agentnet/bus";
import { type Caller, ControlPlane, type GatewaySnapshot } from "@agentnet/contracts";
import { parseSealingKeys, providerCredentialAad, seal } from "@agentnet/sealing";
import { createLogger, hashToken } from "@agentnet/service-kit";
import { connectTestBus, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";
import {
  bearerTokenOf,
  type EntraTokenServer,
  type GoogleTokenServer,
  startEntraTokenServer,
  startGoogleTokenServer,
} from "@agentnet/testkit/oauth-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayProxy, startGatewayProxy } from "../app";
import { makeCaller, makePolicy, makeProvider, makeSettings } from "../test-support/factories";

/**
 * Keys the proxy exchanges for tokens, end to end through the proxy: a Vertex provider holding a
 * service-account key and an Azure provider holding Entra ID client credentials, each behind a
 * local vendor that takes only a token the local token endpoint minted and has not expired.
 */
const sealingKey = parseSealingKeys(TEST_SEALING_KEY);

let proxyBus: NatsConnection;
let controlPlane: NatsConnection;
let proxy: GatewayProxy;
let google: GoogleTokenServer;
let entra: EntraTokenServer;
const served: Subscription[] = [];
const callers = new Map<string, Caller>();
const snapshots = new Map<string, GatewaySnapshot>();
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
  proxyBus = await connectTestBus("gateway-proxy");
  controlPlane = await connectTestBus("control-plane");
  served.push(
    serve(
      controlPlane,
      ControlPlane.authResolve,
      ({ token_hash }) => {
        const caller = callers.get(token_hash);
        if (!caller) throw new Error("unknown token");
        return caller;
      },
      { queue: "vendor-credentials-test" },
    ),
    serve(
      controlPlane,
      ControlPlane.gatewaySnapshot,
      ({ account_id }) => {
        const snapshot = snapshots.get(account_id);
        if (!snapshot) throw new Error("unknown account");
        return snapshot;
      },
      { queue: "vendor-credentials-test" },
    ),
  );
  await controlPlane.flush();
  proxy = await startGatewayProxy({
    nc: proxyBus,
    logger: createLogger("vendor-credentials-test", "silent"),
    sealingKey,
    options: {
      port: 0,
      // The vendors and token endpoints are on loopback, which this test lets the proxy reach.
      refusePrivateUpstreams: false,
      vendorCredentials: { trustedCa: entra.ca, refreshBeforeMs: 1_500, expiryMarginMs: 300 },
      publish: async () => undefined,
    },
  });
});

afterAll(async () => {
  await proxy?.stop();
  for (const subscription of served) subscription.unsubscribe();
  for (const server of servers) server.close();
  await proxyBus?.drain();
  await controlPlane?.drain();
  await google?.close();
  await entra?.close();
});

/** An account with one provider holding `key`, and its caller's agentnet token. */
function accountWith(catalogId: string, upstreamUrl: string, key: string) {
  const accountId = uniqueId("acc");
  const id = uniqueId("prov");
  const provider = makeProvider({
    id,
    name: `p-${id}`,
    provider_id: catalogId,
    upstream_url: upstreamUrl,
    sealed_api_key: seal(sealingKey, key, providerCredentialAad(accountId, id)),
  });
  snapshots.set(accountId, {
    account_id: accountId,
    settings: makeSettings(),
    providers: [provider],
    policies: [makePolicy({ id: uniqueId("pol"), destination_provider_ids: [id] })],
    guardrails: [],
    budget_rules: [],
    generated_at: new Date().toISOString(),
  });
  const token = `agn_${uniqueId("t").padEnd(40, "x").slice(0, 40)}`;
  callers.set(hashToken(token), makeCaller({ account_id: accountId }));
  return token;
}

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
          `${proxy.url}/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent`,
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
    const res = await fetch(`${proxy.url}/openai/v1/chat/completions`, {
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
      `${proxy.url}/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent`,
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
