import { API_KEY_TOKEN } from "@agentnet/contracts";
import {
  type EntraTokenServer,
  type GoogleTokenServer,
  startEntraTokenServer,
  startGoogleTokenServer,
} from "@agentnet/testkit/oauth-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CredentialUnavailableError,
  tokenEndpointAllowed,
  type UpstreamAuth,
  VendorCredentials,
} from "./credentials";

const VERTEX = {
  id: "vertex_api",
  auth_header_name: "Authorization",
  auth_header_template: `Bearer ${API_KEY_TOKEN}`,
};
const AZURE = { id: "azure_api", auth_header_name: "api-key", auth_header_template: API_KEY_TOKEN };
const OPENAI = {
  id: "openai_api",
  auth_header_name: "Authorization",
  auth_header_template: `Bearer ${API_KEY_TOKEN}`,
};

/** The local token endpoints are on loopback, which the proxy refuses unless allowed. */
const LOCAL = { isTokenEndpointAllowed: (url: URL) => url.hostname === "127.0.0.1" };

const tokenOf = (auth: UpstreamAuth) => (auth.value ?? "").replace(/^Bearer /, "");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let google: GoogleTokenServer;
let entra: EntraTokenServer;

beforeAll(async () => {
  google = await startGoogleTokenServer();
  entra = await startEntraTokenServer();
});
afterAll(async () => {
  await google.close();
  await entra.close();
});

describe("VendorCredentials: keys sent as they are", () => {
  it("a plain key fills the catalog's template synchronously", () => {
    const credentials = new VendorCredentials(LOCAL);
    expect(credentials.header("p1", OPENAI, "sk-1")).toEqual({ name: "authorization", value: "Bearer sk-1" });
    expect(credentials.header("p2", AZURE, "azure-key")).toEqual({ name: "api-key", value: "azure-key" });
    expect(credentials.header("p3", VERTEX, "ya29.bare")).toEqual({
      name: "authorization",
      value: "Bearer ya29.bare",
    });
  });
});

describe("VendorCredentials: a Google service-account key", () => {
  it("mints a token the token endpoint verified, then serves it from the cache synchronously", async () => {
    const account = google.serviceAccount();
    const credentials = new VendorCredentials(LOCAL);
    const first = credentials.header("vertex-1", VERTEX, account.json);
    expect(first).toBeInstanceOf(Promise);
    const auth = await first;
    expect(auth.name).toBe("authorization");
    expect(google.subjectOf(tokenOf(auth))).toBe(account.email);
    const again = credentials.header("vertex-1", VERTEX, account.json);
    expect(again).toEqual(auth);
    expect(google.mints.filter((email) => email === account.email)).toHaveLength(1);
  });

  it("concurrent requests share one mint", async () => {
    const account = google.serviceAccount();
    const credentials = new VendorCredentials(LOCAL);
    google.delayMs = 200;
    try {
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => credentials.header("vertex-2", VERTEX, account.json)),
      );
      expect(new Set(answers.map((a) => a.value)).size).toBe(1);
      expect(google.mints.filter((email) => email === account.email)).toHaveLength(1);
    } finally {
      google.delayMs = 0;
    }
  });

  it("a token that expires during the test is refreshed in the background, without a failed or awaited call", async () => {
    const account = google.serviceAccount();
    const credentials = new VendorCredentials({ ...LOCAL, refreshBeforeMs: 1_500, expiryMarginMs: 300 });
    google.lifetimeSeconds = 2.5;
    try {
      await credentials.header("vertex-3", VERTEX, account.json);
      const tokens = new Set<string>();
      let awaited = 0;
      const until = Date.now() + 6_000;
      while (Date.now() < until) {
        const answer = credentials.header("vertex-3", VERTEX, account.json);
        if (answer instanceof Promise) awaited += 1;
        const token = tokenOf(await answer);
        // What a vendor would do with it now: take it only while it is valid.
        expect(google.accepts(token)).toBe(true);
        tokens.add(token);
        await sleep(50);
      }
      expect(awaited).toBe(0);
      // 6 s of 2.5 s tokens refreshed 1.5 s before they expire: a new one each second or so.
      expect(tokens.size).toBeGreaterThanOrEqual(4);
      expect(google.mints.filter((email) => email === account.email).length).toBe(tokens.size);
    } finally {
      google.lifetimeSeconds = 3600;
    }
  });

  it("a rotated key mints anew for the new service account", async () => {
    const before = google.serviceAccount();
    const after = google.serviceAccount();
    const credentials = new VendorCredentials(LOCAL);
    const old = await credentials.header("vertex-4", VERTEX, before.json);
    expect(google.subjectOf(tokenOf(old))).toBe(before.email);
    const rotated = credentials.header("vertex-4", VERTEX, after.json);
    expect(rotated).toBeInstanceOf(Promise);
    expect(google.subjectOf(tokenOf(await rotated))).toBe(after.email);
  });

  it("a failed mint is a CredentialUnavailableError naming the endpoint's error, never a secret; the next mint recovers", async () => {
    const account = google.serviceAccount();
    const credentials = new VendorCredentials({ ...LOCAL, retryAfterFailureMs: 0 });
    google.failNext(1);
    const error = await Promise.resolve()
      .then(() => credentials.header("vertex-5", VERTEX, account.json))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CredentialUnavailableError);
    const failure = error as CredentialUnavailableError;
    expect(failure.code).toBe("provider.credential_unavailable");
    expect(failure.kind).toBe("service_account");
    expect(failure.message).toMatch(/^the Google access token could not be minted: invalid_grant/);
    expect(failure.message).not.toContain("PRIVATE KEY");
    expect(failure.cause).toBeUndefined();
    const recovered = await credentials.header("vertex-5", VERTEX, account.json);
    expect(google.accepts(tokenOf(recovered))).toBe(true);
  });

  it("a key the token endpoint does not know fails fast for a moment instead of calling it on every request", async () => {
    const account = google.serviceAccount();
    google.revoke(account.email);
    const credentials = new VendorCredentials({ ...LOCAL, retryAfterFailureMs: 60_000 });
    await expect(credentials.header("vertex-6", VERTEX, account.json)).rejects.toThrow(
      /Invalid|no service account/,
    );
    const refusals = google.refusals.length;
    expect(() => credentials.header("vertex-6", VERTEX, account.json)).toThrow(CredentialUnavailableError);
    expect(google.refusals.length).toBe(refusals);
  });

  it("a background refresh that fails keeps serving the token in hand and is reported", async () => {
    const account = google.serviceAccount();
    const reported: string[] = [];
    const credentials = new VendorCredentials({
      ...LOCAL,
      refreshBeforeMs: 10_000,
      expiryMarginMs: 100,
      retryAfterFailureMs: 60_000,
      onRefreshFailure: (providerId, error) => reported.push(`${providerId}: ${error.message}`),
    });
    google.lifetimeSeconds = 5;
    try {
      const first = await credentials.header("vertex-7", VERTEX, account.json);
      google.failNext(1);
      // Less than refreshBeforeMs left: served now, refreshed behind the request, which fails.
      expect(credentials.header("vertex-7", VERTEX, account.json)).toEqual(first);
      await sleep(200);
      expect(reported).toEqual([
        expect.stringMatching(/^vertex-7: the Google access token could not be minted/),
      ]);
      expect(credentials.header("vertex-7", VERTEX, account.json)).toEqual(first);
    } finally {
      google.lifetimeSeconds = 3600;
    }
  });
});

describe("VendorCredentials: token endpoints", () => {
  it("grants go only to the vendors' own token endpoints unless the proxy allows another", () => {
    const credentials = new VendorCredentials();
    // The message names no endpoint: members' requests can end with it, and the key is the admin's.
    expect(() => credentials.header("local-1", VERTEX, google.serviceAccount().json)).toThrow(
      /: this gateway does not send grants to the token endpoint the key names$/,
    );
    expect(() => credentials.header("local-2", AZURE, entra.client().json)).toThrow(
      CredentialUnavailableError,
    );
  });

  it("a vendor's own token host only on https's standard port", () => {
    expect(tokenEndpointAllowed(new URL("https://oauth2.googleapis.com/token"))).toBe(true);
    expect(tokenEndpointAllowed(new URL("https://oauth2.googleapis.com:443/token"))).toBe(true);
    expect(tokenEndpointAllowed(new URL("https://oauth2.googleapis.com:8443/token"))).toBe(false);
    expect(tokenEndpointAllowed(new URL("http://oauth2.googleapis.com/token"))).toBe(false);
    expect(tokenEndpointAllowed(new URL("https://login.microsoftonline.com"))).toBe(true);
    expect(tokenEndpointAllowed(new URL("https://8.8.8.8/token"))).toBe(false);
  });

  it("checks a key without minting: its token endpoint must be allowed", () => {
    const before = google.mints.length;
    expect(() => new VendorCredentials().check("vertex_api", google.serviceAccount().json)).toThrow(
      CredentialUnavailableError,
    );
    expect(() =>
      new VendorCredentials(LOCAL).check("vertex_api", google.serviceAccount().json),
    ).not.toThrow();
    expect(() => new VendorCredentials().check("openai_api", "sk-plain")).not.toThrow();
    expect(google.mints.length).toBe(before);
  });
});

describe("VendorCredentials: Microsoft Entra ID client credentials", () => {
  it("mints an Azure OpenAI token through @azure/identity and sends it as a bearer token", async () => {
    const app = entra.client();
    const credentials = new VendorCredentials({ ...LOCAL, trustedCa: entra.ca });
    const auth = await credentials.header("azure-1", AZURE, app.json);
    expect(auth.name).toBe("authorization");
    expect(entra.subjectOf(tokenOf(auth))).toBe(app.credentials.client_id);
    expect(credentials.header("azure-1", AZURE, app.json)).toEqual(auth);
    expect(entra.mints.filter((id) => id === app.credentials.client_id)).toHaveLength(1);
  });

  it("concurrent requests share one mint, and a token about to expire is replaced", async () => {
    const app = entra.client();
    const credentials = new VendorCredentials({
      ...LOCAL,
      trustedCa: entra.ca,
      refreshBeforeMs: 1_500,
      expiryMarginMs: 300,
    });
    entra.lifetimeSeconds = 2.5;
    try {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => credentials.header("azure-2", AZURE, app.json)),
      );
      expect(new Set(answers.map((a) => a.value)).size).toBe(1);
      expect(entra.mints.filter((id) => id === app.credentials.client_id)).toHaveLength(1);
      await sleep(1_200);
      // Less than refreshBeforeMs left: the token in hand is served while a new one is minted.
      let refreshed = credentials.header("azure-2", AZURE, app.json);
      expect(refreshed).toEqual(answers[0]);
      const until = Date.now() + 1_000;
      while (Date.now() < until && !(refreshed instanceof Promise) && refreshed.value === answers[0]?.value) {
        await sleep(25);
        refreshed = credentials.header("azure-2", AZURE, app.json);
      }
      expect(refreshed).not.toBeInstanceOf(Promise);
      expect(refreshed).not.toEqual(answers[0]);
      expect(entra.accepts(tokenOf(await refreshed))).toBe(true);
    } finally {
      entra.lifetimeSeconds = 3600;
    }
  });

  it("a wrong secret is a CredentialUnavailableError", async () => {
    const app = entra.client();
    const wrong = JSON.stringify({ ...app.credentials, client_secret: "not-it" });
    const credentials = new VendorCredentials({ ...LOCAL, trustedCa: entra.ca });
    const error = await Promise.resolve()
      .then(() => credentials.header("azure-3", AZURE, wrong))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CredentialUnavailableError);
    expect((error as Error).message).toMatch(/^the Entra ID token could not be minted/);
    expect((error as Error).message).not.toContain("not-it");
  });
});
