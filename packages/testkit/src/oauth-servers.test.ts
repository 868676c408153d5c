import { createSign } from "node:crypto";
import { request } from "node:https";
import { describe, expect, it } from "vitest";
import {
  AZURE_COGNITIVE_SERVICES_SCOPE,
  GOOGLE_CLOUD_PLATFORM_SCOPE,
  startEntraTokenServer,
  startGoogleTokenServer,
} from "./oauth-servers";

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

function assertion(privateKey: string, claims: Record<string, unknown>): string {
  const unsigned = `${b64({ alg: "RS256", typ: "JWT" })}.${b64(claims)}`;
  const signature = createSign("RSA-SHA256").update(unsigned).sign(privateKey).toString("base64url");
  return `${unsigned}.${signature}`;
}

describe("the fake Google token endpoint", () => {
  it("mints a token for an assertion signed with the service account's key, and only for that", async () => {
    const google = await startGoogleTokenServer({ lifetimeSeconds: 60 });
    try {
      const account = google.serviceAccount();
      const other = google.serviceAccount();
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        iss: account.email,
        aud: account.key.token_uri,
        scope: GOOGLE_CLOUD_PLATFORM_SCOPE,
        iat: now,
        exp: now + 3600,
      };
      const grant = (jwt: string) =>
        fetch(google.tokenUri, {
          method: "POST",
          body: new URLSearchParams({
            grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
            assertion: jwt,
          }),
        });
      const ok = await grant(assertion(account.key.private_key, claims));
      expect(ok.status).toBe(200);
      const token = (await ok.json()) as { access_token: string; expires_in: number };
      expect(token.expires_in).toBe(60);
      expect(google.accepts(token.access_token)).toBe(true);
      expect(google.subjectOf(`Bearer ${token.access_token}`)).toBe(account.email);

      // Signed with another account's key: refused.
      const forged = await grant(assertion(other.key.private_key, claims));
      expect(forged.status).toBe(400);
      expect(google.accepts("ya29.made-up")).toBe(false);
      expect(google.mints).toEqual([account.email]);
    } finally {
      await google.close();
    }
  });
});

describe("the fake Entra ID authority", () => {
  it("answers OpenID discovery and mints a client-credentials token over https with the test CA", async () => {
    const entra = await startEntraTokenServer({ lifetimeSeconds: 60 });
    try {
      const { credentials } = entra.client();
      const body = new URLSearchParams({
        grant_type: "client_credentials",
        client_id: credentials.client_id,
        client_secret: credentials.client_secret,
        scope: AZURE_COGNITIVE_SERVICES_SCOPE,
      }).toString();
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          `${entra.authorityHost}/${credentials.tenant_id}/oauth2/v2.0/token`,
          { method: "POST", ca: entra.ca, headers: { "content-type": "application/x-www-form-urlencoded" } },
          (res) => {
            let text = "";
            res.on("data", (chunk) => {
              text += chunk;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
      expect(answer.status).toBe(200);
      const token = JSON.parse(answer.text) as { access_token: string; token_type: string };
      expect(token.token_type).toBe("Bearer");
      expect(entra.accepts(token.access_token)).toBe(true);
      expect(entra.mints).toEqual([credentials.client_id]);
    } finally {
      await entra.close();
    }
  });
});
