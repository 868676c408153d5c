import { describe, expect, it } from "vitest";
import { keyFieldText, shortLivedKeyWarning, typedKeyKind } from "./credential-kinds";

describe("the provider form's key field", () => {
  it("says what each catalog entry takes", () => {
    expect(keyFieldText("vertex_api").accepts).toMatch(/service-account key file/);
    expect(keyFieldText("azure_api").accepts).toMatch(/tenant_id/);
    expect(keyFieldText("bedrock_api")).toMatchObject({
      label: "Bedrock API key or IAM access keys",
      missing: "enter the Bedrock API key or the IAM access keys",
    });
    expect(keyFieldText("bedrock_api").accepts).toMatch(
      /access_key_id.*secret_access_key.*session_token.*region/,
    );
    expect(keyFieldText("openai_api")).toMatchObject({
      label: "API key",
      missing: "enter the vendor API key",
    });
  });

  it("tells a pasted key file from a bare token", () => {
    expect(typedKeyKind("vertex_api", ' {"type": "service_account"}')).toBe("service_account");
    expect(typedKeyKind("vertex_api", "ya29.a0")).toBe("access_token");
    expect(typedKeyKind("azure_api", '{"tenant_id": "t"}')).toBe("entra_client_secret");
    expect(typedKeyKind("bedrock_api", '{"access_key_id": "AKIA"}')).toBe("aws_access_key");
    expect(typedKeyKind("bedrock_api", "ABSKexample")).toBe("api_key");
    expect(typedKeyKind("openai_api", "{")).toBeUndefined();
    expect(typedKeyKind("openai_api", "")).toBeUndefined();
  });

  it("warns that a bare Vertex access token expires, typed or stored", () => {
    expect(shortLivedKeyWarning("vertex_api", "ya29.a0", undefined)).toMatch(/expires within an hour/);
    expect(shortLivedKeyWarning("vertex_api", "", "access_token")).toMatch(/expires within an hour/);
    // A key file being typed replaces the stored token: no warning.
    expect(shortLivedKeyWarning("vertex_api", '{"type": "service_account"}', "access_token")).toBeUndefined();
    expect(shortLivedKeyWarning("vertex_api", "", "service_account")).toBeUndefined();
    expect(shortLivedKeyWarning("openai_api", "sk-1", undefined)).toBeUndefined();
  });
});
