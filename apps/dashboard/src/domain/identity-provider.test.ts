import { describe, expect, it } from "vitest";
import { callbackUrl, draftOf, identityProviderBody, parseEmailDomains } from "./identity-provider";

describe("parseEmailDomains", () => {
  it("reads domains separated by commas, spaces or lines, lower-cased, an @ before one dropped", () => {
    expect(parseEmailDomains(" Example.com, @corp.example\nother.example ;; ")).toEqual([
      "example.com",
      "corp.example",
      "other.example",
    ]);
    expect(parseEmailDomains("  ")).toEqual([]);
  });
});

describe("identityProviderBody", () => {
  const stored = {
    issuer: "https://login.example.com",
    client_id: "agentnet",
    client_secret_set: true,
    allowed_email_domains: ["example.com"],
    groups_claim: "groups",
    group_mapping: [{ claim_value: "eng", group_id: "g1" }],
    default_role: "user" as const,
    enabled: true,
    updated_at: "2026-12-01T00:00:00.000Z",
  };

  it("keeps the stored client secret by leaving an empty one out", () => {
    const body = identityProviderBody(draftOf(stored));
    expect(body).not.toHaveProperty("client_secret");
    expect(body).toMatchObject({
      allowed_email_domains: ["example.com"],
      group_mapping: stored.group_mapping,
    });
  });

  it("sends a secret typed anew, and drops mapping rows left wholly empty but not half-filled ones", () => {
    const draft = {
      ...draftOf(stored),
      client_secret: " s3cret ",
      group_mapping: [
        { claim_value: "", group_id: "" },
        { claim_value: "ops", group_id: "" },
      ],
    };
    const body = identityProviderBody(draft);
    expect(body.client_secret).toBe("s3cret");
    expect(body.group_mapping).toEqual([{ claim_value: "ops", group_id: "" }]);
  });

  it("starts a new provider with the API's defaults", () => {
    expect(draftOf(undefined)).toMatchObject({ groups_claim: "groups", default_role: "user", enabled: true });
  });
});

describe("callbackUrl", () => {
  it("is the api-gateway's callback on the dashboard's origin", () => {
    expect(callbackUrl("https://agentnet.example.com")).toBe(
      "https://agentnet.example.com/api/auth/oidc/callback",
    );
  });
});
