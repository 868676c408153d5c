import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { acceptedKinds, describeKey, parseAwsAccessKey } from "./keys";

const privateKey = generateKeyPairSync("rsa", { modulusLength: 1024 })
  .privateKey.export({ type: "pkcs8", format: "pem" })
  .toString();

const serviceAccount = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: "service_account",
    project_id: "p",
    private_key_id: "abc",
    private_key: privateKey,
    client_email: "sa@p.iam.gserviceaccount.com",
    token_uri: "https://oauth2.googleapis.com/token",
    ...overrides,
  });

const awsKeys = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    access_key_id: "AKIAIOSFODNN7EXAMPLE",
    secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ...overrides,
  });

const entra = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({ tenant_id: "contoso.onmicrosoft.com", client_id: "c", client_secret: "s", ...overrides });

describe("describeKey: the kinds of key each catalog entry takes", () => {
  it("a plain key is an API key, and a bare token for Vertex", () => {
    expect(describeKey("openai_api", "sk-test")).toEqual({ kind: "api_key" });
    expect(describeKey("azure_api", "0123abcd")).toEqual({ kind: "api_key" });
    expect(describeKey("vertex_api", "ya29.a0AfB")).toEqual({ kind: "access_token" });
  });

  it("a service-account key file is a Vertex key, however it is indented", () => {
    expect(describeKey("vertex_api", serviceAccount())).toEqual({ kind: "service_account" });
    expect(describeKey("vertex_api", `\n  ${JSON.stringify(JSON.parse(serviceAccount()), null, 2)}`)).toEqual(
      {
        kind: "service_account",
      },
    );
  });

  it("a service-account key that is not one, or is incomplete, says what is wrong", () => {
    expect(describeKey("vertex_api", serviceAccount({ type: "authorized_user" })).problem).toMatch(
      /service-account/,
    );
    expect(describeKey("vertex_api", serviceAccount({ client_email: undefined })).problem).toMatch(
      /client_email/,
    );
    expect(describeKey("vertex_api", serviceAccount({ private_key: "nope" })).problem).toMatch(/private_key/);
    expect(
      describeKey("vertex_api", serviceAccount({ token_uri: "http://evil.example/token" })).problem,
    ).toMatch(/token_uri must be an https URL/);
    // A local test endpoint is allowed on loopback only.
    expect(describeKey("vertex_api", serviceAccount({ token_uri: "http://127.0.0.1:4000/token" }))).toEqual({
      kind: "service_account",
    });
  });

  it("malformed JSON is refused without quoting the text (it holds a secret)", () => {
    const description = describeKey("vertex_api", '{"private_key": "-----BEGIN SECRET');
    expect(description.problem).toBe("api_key looks like JSON but is not: not valid JSON");
  });

  it("Entra ID client credentials are an Azure key; missing or misspelled fields are named", () => {
    expect(describeKey("azure_api", entra())).toEqual({ kind: "entra_client_secret" });
    expect(describeKey("azure_api", entra({ authority_host: "https://login.microsoftonline.us" }))).toEqual({
      kind: "entra_client_secret",
    });
    const problem = describeKey(
      "azure_api",
      JSON.stringify({ tenantId: "t", client_id: "c", client_secret: "s" }),
    );
    expect(problem.problem).toMatch(/missing tenant_id; unknown tenantId/);
    expect(describeKey("azure_api", entra({ authority_host: "http://login.example" })).problem).toMatch(
      /https/,
    );
  });

  it("a plain Bedrock key is a Bedrock API key; AWS access keys are a Bedrock key too", () => {
    expect(describeKey("bedrock_api", "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl")).toEqual({ kind: "api_key" });
    expect(describeKey("bedrock_api", awsKeys())).toEqual({ kind: "aws_access_key" });
    expect(
      describeKey(
        "bedrock_api",
        awsKeys({ session_token: "IQoJb3JpZ2luX2VjEXAMPLE/+=", region: "eu-west-3" }),
      ),
    ).toEqual({ kind: "aws_access_key" });
    expect(parseAwsAccessKey(awsKeys({ region: "us-gov-west-1" }))).toEqual({
      access_key_id: "AKIAIOSFODNN7EXAMPLE",
      secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      region: "us-gov-west-1",
    });
  });

  it("AWS access keys name their missing or unknown fields and refuse what cannot be signed with", () => {
    expect(
      describeKey("bedrock_api", JSON.stringify({ accessKeyId: "AKIA", secret_access_key: "s" })).problem,
    ).toBe(
      'AWS access keys are {"access_key_id", "secret_access_key"} and optionally "session_token", "region"; missing access_key_id; unknown accessKeyId',
    );
    expect(describeKey("bedrock_api", awsKeys({ secret_access_key: "" })).problem).toMatch(
      /missing secret_access_key$/,
    );
    expect(describeKey("bedrock_api", awsKeys({ access_key_id: "AKIA/x" })).problem).toMatch(/access_key_id/);
    expect(describeKey("bedrock_api", awsKeys({ session_token: "a\r\nx-evil: 1" })).problem).toMatch(
      /session_token/,
    );
    expect(describeKey("bedrock_api", awsKeys({ region: "US East" })).problem).toMatch(
      /region must be an AWS region name/,
    );
    // The secret is never quoted back.
    expect(describeKey("bedrock_api", awsKeys({ region: 1 })).problem).not.toContain("wJalr");
  });

  it("a JSON credential for an entry that takes only API keys is refused", () => {
    expect(describeKey("openai_api", serviceAccount()).problem).toBe(
      "openai_api takes an API key, not a JSON credential",
    );
    expect(describeKey("vertex_api", entra()).problem).toMatch(/service-account key/);
    expect(describeKey("anthropic_api", awsKeys()).problem).toBe(
      "anthropic_api takes an API key, not a JSON credential",
    );
  });

  it("acceptedKinds lists what the dashboard offers", () => {
    expect(acceptedKinds("vertex_api")).toEqual(["service_account", "access_token"]);
    expect(acceptedKinds("azure_api")).toEqual(["api_key", "entra_client_secret"]);
    expect(acceptedKinds("bedrock_api")).toEqual(["api_key", "aws_access_key"]);
    expect(acceptedKinds("mistral_api")).toEqual(["api_key"]);
  });
});
