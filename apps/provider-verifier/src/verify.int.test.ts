import { request } from "@agentnet/bus";
import { VERIFY_REFUSALS, type VerifyProviderRequest } from "@agentnet/contracts";
import { type GoogleTokenServer, startGoogleTokenServer } from "@agentnet/testkit/oauth-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLOUDFLARE_LISTING_HOST,
  expectRefusal,
  type Harness,
  MIXED_HOST,
  PRIVATE_HOST,
  REFUSED_HOST,
  SKIP_HOST,
  startHarness,
  UNTRUSTED_HOST,
  WRONG_NAME_HOST,
} from "./test-support/harness";
import { GOOD_KEY, vertexTokens } from "./test-support/vendors";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ timeoutMs: 1_500, maxBodyBytes: 64 * 1024 });
});
afterAll(async () => {
  await h?.stop();
});

const verify = (overrides: Partial<VerifyProviderRequest> & { upstream_url: string }) =>
  request(h.nc, h.endpoints.verifyProvider, {
    catalog_provider_id: "openai_api",
    api_key: GOOD_KEY,
    skip_tls_verification: false,
    ...overrides,
  });

describe("verifyProvider: the vendor answers", () => {
  it("verifies a credential the listing accepts, sending the catalog's auth header at the catalog's path", async () => {
    // Scheme http and a made-up path: only host and port are used.
    await expect(
      verify({ upstream_url: h.upstream("ok.vendor.test", "/some/path").replace("https:", "http:") }),
    ).resolves.toEqual({
      outcome: "verified",
    });
    const [seen] = h.vendors.seenBy("ok.vendor.test");
    expect(seen?.path).toBe("/v1/models");
    expect(seen?.headers.authorization).toBe(`Bearer ${GOOD_KEY}`);
    // SNI and the Host header carry the name, while the socket went to the address resolved once
    // (the OS resolver knows no *.vendor.test, so a second lookup would have failed).
    expect(seen?.headers.host).toBe(`ok.vendor.test:${h.vendors.port}`);
    expect(h.resolvedNames.filter((name) => name === "ok.vendor.test")).toHaveLength(1);
  });

  it("sends the provider's values for the catalog's extra headers, and nothing undeclared", async () => {
    const before = h.vendors.seenBy("ok.vendor.test").length;
    await verify({
      upstream_url: h.upstream("ok.vendor.test"),
      extra_values: { "OpenAI-Organization": "org-42", "X-Not-Declared": "nope" },
    });
    const seen = h.vendors.seenBy("ok.vendor.test")[before];
    expect(seen?.headers["openai-organization"]).toBe("org-42");
    expect(seen?.headers["x-not-declared"]).toBeUndefined();
  });

  it("verifies an Anthropic credential with its x-api-key and default anthropic-version header", async () => {
    await expect(
      verify({ catalog_provider_id: "anthropic_api", upstream_url: h.upstream("anthropic.vendor.test") }),
    ).resolves.toEqual({ outcome: "verified" });
  });

  it("refuses a credential the vendor rejects with 401 or 403, without echoing it", async () => {
    await expectRefusal(
      verify({ upstream_url: h.upstream("denied.vendor.test") }),
      VERIFY_REFUSALS.rejectedCredential,
      /^the vendor rejected the credential \(HTTP 401\)$/,
    );
    await expectRefusal(
      verify({ upstream_url: h.upstream("forbidden.vendor.test") }),
      VERIFY_REFUSALS.rejectedCredential,
      /HTTP 403/,
    );
    await expectRefusal(
      verify({ upstream_url: h.upstream("ok.vendor.test"), api_key: "sk-test-SECRET-wrong-key-42" }),
      VERIFY_REFUSALS.rejectedCredential,
      /HTTP 401/,
    );
  });

  it("reports a vendor outage on 5xx", async () => {
    await expectRefusal(
      verify({ upstream_url: h.upstream("outage.vendor.test") }),
      VERIFY_REFUSALS.vendorOutage,
      /HTTP 500.*try again later/,
    );
  });

  it("times out a vendor that does not answer in VERIFY_TIMEOUT_MS", async () => {
    const started = Date.now();
    await expectRefusal(
      verify({ upstream_url: h.upstream("slow.vendor.test") }),
      VERIFY_REFUSALS.timeout,
      /did not answer within 1500 ms/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("does not follow redirects", async () => {
    const before = h.vendors.seenBy("ok.vendor.test").length;
    await expectRefusal(
      verify({ upstream_url: h.upstream("redirect.vendor.test") }),
      VERIFY_REFUSALS.badResponse,
      /HTTP 302.*redirects are not followed/,
    );
    expect(h.vendors.seenBy("ok.vendor.test")).toHaveLength(before);
  });

  it("cuts off a response beyond the body cap", async () => {
    await expectRefusal(
      verify({ upstream_url: h.upstream("huge.vendor.test") }),
      VERIFY_REFUSALS.badResponse,
      /more than 65536 bytes/,
    );
  });

  it("refuses answers that are not a model list", async () => {
    await expectRefusal(
      verify({ upstream_url: h.upstream("garbage.vendor.test") }),
      VERIFY_REFUSALS.badResponse,
      /JSON/,
    );
    await expectRefusal(
      verify({ upstream_url: h.upstream("wrongshape.vendor.test") }),
      VERIFY_REFUSALS.badResponse,
      /unexpected shape \(data: /,
    );
    await expectRefusal(
      verify({ upstream_url: h.upstream("gone.vendor.test") }),
      VERIFY_REFUSALS.badResponse,
      /HTTP 404/,
    );
  });
});

describe("verifyProvider: the listing cannot be reached", () => {
  it("refuses a host that does not resolve", async () => {
    await expectRefusal(
      verify({ upstream_url: "https://nowhere.vendor.test/v1" }),
      VERIFY_REFUSALS.unresolvable,
      /nowhere\.vendor\.test does not resolve \(ENOTFOUND\)/,
    );
  });

  it("refuses a host that refuses the connection or resets it", async () => {
    await expectRefusal(
      verify({ upstream_url: h.upstream(REFUSED_HOST) }),
      VERIFY_REFUSALS.unreachable,
      /refused the connection \(ECONNREFUSED\)/,
    );
    await expectRefusal(
      verify({ upstream_url: h.upstream("reset.vendor.test") }),
      VERIFY_REFUSALS.unreachable,
      /reset\.vendor\.test closed the connection/,
    );
  });

  it("refuses a certificate that is not trusted or does not name the host", async () => {
    await expectRefusal(
      verify({ upstream_url: h.upstream(UNTRUSTED_HOST) }),
      VERIFY_REFUSALS.unreachable,
      /^TLS with untrusted\.vendor\.test failed: .*trusted/,
    );
    await expectRefusal(
      verify({ upstream_url: h.upstream(WRONG_NAME_HOST) }),
      VERIFY_REFUSALS.unreachable,
      /does not name this host \(ERR_TLS_CERT_ALTNAME_INVALID\)/,
    );
    expect(h.vendors.seenBy(WRONG_NAME_HOST)).toEqual([]);
  });

  it("refuses an API key that could smuggle a header line", async () => {
    const error = await verify({
      upstream_url: h.upstream("ok.vendor.test"),
      api_key: "sk-x\r\nX-Evil: 1",
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "bad_request" });
  });
});

describe("verifyProvider: stored unverified", () => {
  it("never dials an upstream that resolves to a private address", async () => {
    await expect(verify({ upstream_url: h.upstream(PRIVATE_HOST) })).resolves.toEqual({
      outcome: "unverified",
      reason: "private_address",
    });
    expect(h.vendors.seenBy(PRIVATE_HOST)).toEqual([]);
  });

  it("refuses a name when any one of its addresses is private", async () => {
    await expect(verify({ upstream_url: `https://${MIXED_HOST}/v1` })).resolves.toEqual({
      outcome: "unverified",
      reason: "private_address",
    });
  });

  it.each([
    "https://10.0.0.8/v1",
    "https://169.254.169.254/latest",
    "https://[::1]:8443/",
    "https://[::ffff:127.0.0.1]/",
    "http://0x7f.1/",
  ])("treats the IP literal upstream %s as private without resolving it", async (upstream_url) => {
    const asked = h.resolvedNames.length;
    await expect(verify({ upstream_url })).resolves.toEqual({
      outcome: "unverified",
      reason: "private_address",
    });
    expect(h.resolvedNames).toHaveLength(asked);
  });

  it("does not dial at all with skip_tls_verification", async () => {
    await expect(
      verify({ upstream_url: h.upstream(SKIP_HOST), skip_tls_verification: true }),
    ).resolves.toEqual({
      outcome: "unverified",
      reason: "tls_verification_skipped",
    });
    expect(h.vendors.seenBy(SKIP_HOST)).toEqual([]);
    expect(h.resolvedNames).not.toContain(SKIP_HOST);
  });

  it("stores a catalog entry without a listing (custom) unverified", async () => {
    await expect(
      verify({ catalog_provider_id: "custom", upstream_url: "https://10.1.2.3:8000/v1" }),
    ).resolves.toEqual({
      outcome: "unverified",
      reason: "no_listing_endpoint",
    });
  });

  it("stores an upstream without a host unverified", async () => {
    await expect(verify({ upstream_url: "not a url" })).resolves.toEqual({
      outcome: "unverified",
      reason: "no_host",
    });
    await expect(
      verify({ catalog_provider_id: "azure_api", upstream_url: "https://{resource}.openai.azure.com" }),
    ).resolves.toEqual({
      outcome: "unverified",
      reason: "no_host",
    });
  });

  it("only resolves a control-plane listing host (Cloudflare), never contacting it", async () => {
    const asked = h.resolvedNames.length;
    await expect(
      verify({
        catalog_provider_id: "cloudflare_api",
        upstream_url: "https://gateway.ai.cloudflare.com/v1/acc123/gw/compat",
      }),
    ).resolves.toEqual({ outcome: "unverified", reason: "listing_host_resolved_only" });
    expect(h.resolvedNames.slice(asked)).toEqual([CLOUDFLARE_LISTING_HOST]);
  });
});

describe("verifyProvider: a control-plane listing host that does not resolve", () => {
  let dark: Harness;
  beforeAll(async () => {
    dark = await startHarness({ cloudflareResolves: false });
  });
  afterAll(async () => {
    await dark?.stop();
  });

  it("refuses with listing_unresolvable", async () => {
    await expectRefusal(
      request(dark.nc, dark.endpoints.verifyProvider, {
        catalog_provider_id: "cloudflare_api",
        upstream_url: "https://gateway.ai.cloudflare.com/v1/acc123/gw/compat",
        api_key: GOOD_KEY,
        skip_tls_verification: false,
      }),
      VERIFY_REFUSALS.unresolvable,
      /api\.cloudflare\.com does not resolve/,
    );
  });
});

describe("verifyProvider: a Vertex service-account key", () => {
  let google: GoogleTokenServer;
  let vertex: Harness;
  beforeAll(async () => {
    google = await startGoogleTokenServer();
    vertexTokens.accepts = (token) => google.accepts(token);
    vertex = await startHarness({ tokenEndpoints: [new URL(google.tokenUri).origin] });
  });
  afterAll(async () => {
    await vertex?.stop();
    await google?.close();
  });

  const verifyVertex = (apiKey: string) =>
    request(vertex.nc, vertex.endpoints.verifyProvider, {
      catalog_provider_id: "vertex_api",
      upstream_url: vertex.upstream("vertex.vendor.test", "/v1/projects/p/locations/us-central1"),
      api_key: apiKey,
      skip_tls_verification: false,
    });

  it("mints a token at the key's token_uri, then lists the models with it", async () => {
    const account = google.serviceAccount();
    await expect(verifyVertex(account.json)).resolves.toEqual({ outcome: "verified" });
    expect(google.mints).toContain(account.email);
    const [seen] = vertex.vendors.seenBy("vertex.vendor.test").slice(-1);
    expect(seen?.path).toBe("/v1beta1/publishers/google/models");
    expect(google.subjectOf(seen?.headers.authorization)).toBe(account.email);
  });

  it("refuses a key the token endpoint does not take, without quoting the key", async () => {
    const account = google.serviceAccount();
    google.revoke(account.email);
    await expectRefusal(
      verifyVertex(account.json),
      VERIFY_REFUSALS.rejectedCredential,
      /Google access token could not be minted/,
    );
  });

  it("refuses a key naming a token endpoint other than Google's that this verifier was not told of", async () => {
    const account = google.serviceAccount();
    const elsewhere = JSON.stringify({ ...account.key, token_uri: "http://127.0.0.1:9/token" });
    await expectRefusal(
      verifyVertex(elsewhere),
      VERIFY_REFUSALS.rejectedCredential,
      /does not send grants to the token endpoint the key names/,
    );
  });

  it("refuses such a key with skip_tls_verification too, and Google's host on another port", async () => {
    const account = google.serviceAccount();
    for (const token_uri of ["http://127.0.0.1:8080/token", "https://oauth2.googleapis.com:8443/token"]) {
      const key = JSON.stringify({ ...account.key, token_uri });
      await expectRefusal(
        request(vertex.nc, vertex.endpoints.verifyProvider, {
          catalog_provider_id: "vertex_api",
          upstream_url: vertex.upstream("vertex.vendor.test", "/v1/projects/p/locations/us-central1"),
          api_key: key,
          skip_tls_verification: true,
        }),
        VERIFY_REFUSALS.rejectedCredential,
        /does not send grants to the token endpoint the key names/,
      );
    }
  });

  it("mints nothing for an upstream it will not dial", async () => {
    const account = google.serviceAccount();
    await expect(
      request(vertex.nc, vertex.endpoints.verifyProvider, {
        catalog_provider_id: "vertex_api",
        upstream_url: "https://10.0.0.8/v1/projects/p/locations/us-central1",
        api_key: account.json,
        skip_tls_verification: false,
      }),
    ).resolves.toEqual({ outcome: "unverified", reason: "private_address" });
    expect(google.mints).not.toContain(account.email);
  });

  it("a bare access token is sent as it is", async () => {
    await expectRefusal(verifyVertex("ya29.expired"), VERIFY_REFUSALS.rejectedCredential, /HTTP 401/);
    const [seen] = vertex.vendors.seenBy("vertex.vendor.test").slice(-1);
    expect(seen?.headers.authorization).toBe("Bearer ya29.expired");
  });
});
