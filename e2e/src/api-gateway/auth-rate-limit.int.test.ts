import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./harness";

const PER_MINUTE = 3;
let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness({ authRateLimitPerMinute: PER_MINUTE });
});
afterAll(async () => {
  await api?.stop();
});

const startDevice = () =>
  api.call<Record<string, unknown>>("POST", "/api/auth/device/code", {
    body: { client_name: "laptop" },
    // Not trusted (AGN_TRUST_PROXY is off): a made-up forwarded address is no way around the bound.
    headers: { "x-forwarded-for": `198.51.100.${Math.floor(Math.random() * 250)}` },
  });

describe("the public auth endpoints, bounded per client address", () => {
  it("refuses an address past its requests a minute: 429 with Retry-After, in OAuth's shape for agents and back to the sign-in page for a browser", async () => {
    const owner = await api.bootstrap();
    for (let i = 0; i < PER_MINUTE; i++) expect((await startDevice()).status).toBe(200);
    const refused = await startDevice();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({
      error: "too_many_requests",
      error_description: expect.stringMatching(
        /^too many sign-in requests from your address: try again in \d+ s$/,
      ),
      code: 429,
    });
    // Polls and refreshes count against the same bound; a poll is told to slow down, as a
    // device-flow client understands (RFC 8628), a refresh to come back later.
    const poll = await api.call("POST", "/api/auth/device/token", {
      body: { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: "x" },
    });
    expect(poll).toMatchObject({ status: 400, body: { error: "slow_down" } });
    expect((await api.call("POST", "/api/auth/token", { body: { refresh_token: "agr_x" } })).status).toBe(
      429,
    );

    const signIn = await fetch(`${api.baseUrl}/api/auth/oidc/start?email=someone@example.com`, {
      redirect: "manual",
    });
    expect(signIn.status).toBe(303);
    const location = new URL(signIn.headers.get("location") ?? "", api.baseUrl);
    expect(new URLSearchParams(location.hash.split("?")[1]).get("sign_in_error")).toMatch(
      /^too many sign-in requests from your address/,
    );

    // What needs a credential is not bounded by it.
    expect((await api.call("GET", "/api/auth/session", { token: owner.token })).status).not.toBe(429);
    expect((await api.call("GET", "/api/groups", { token: owner.token })).status).toBe(200);
  });
});

describe("behind a trusted load balancer (AGN_TRUST_PROXY)", () => {
  let behind: ApiHarness;
  beforeAll(async () => {
    behind = await startApiHarness({ authRateLimitPerMinute: PER_MINUTE, trustProxy: true });
  });
  afterAll(async () => {
    await behind?.stop();
  });
  const startFrom = (forwardedFor: string) =>
    behind.call("POST", "/api/auth/device/code", { body: {}, headers: { "x-forwarded-for": forwardedFor } });

  it("counts the address the balancer appended, whatever the client wrote before it", async () => {
    for (let i = 0; i < PER_MINUTE; i++)
      expect((await startFrom(`10.9.9.${i}, 203.0.113.7`)).status).toBe(200);
    expect((await startFrom("10.9.9.99, 203.0.113.7")).status).toBe(429);
    expect((await startFrom("203.0.113.8")).status).toBe(200);
  });
});
