import { createHash, createHmac } from "node:crypto";
import { API_KEY_TOKEN } from "@agentnet/contracts";
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import { describe, expect, it } from "vitest";
import { AwsSigningError, awsRequestSigner, regionOfBedrockHost, signingRegion } from "./aws";
import { CredentialUnavailableError, type UpstreamAuth, VendorCredentials } from "./credentials";

const sha256Hex = (data: string) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/**
 * Signature Version 4 written out from AWS's description (canonical request, string to sign, the
 * derived key), with node:crypto only: the check the signer is held to, itself held to AWS's
 * published "get-vanilla" example below.
 */
function referenceSigV4(input: {
  method: string;
  canonicalUri: string;
  canonicalQuery: string;
  headers: Record<string, string>;
  payloadHash: string;
  amzDate: string;
  region: string;
  service: string;
  secret: string;
}): { signedHeaders: string; signature: string } {
  const names = Object.keys(input.headers).sort();
  const canonicalHeaders = names.map((name) => `${name}:${input.headers[name]?.trim()}\n`).join("");
  const signedHeaders = names.join(";");
  const canonicalRequest = [
    input.method,
    input.canonicalUri,
    input.canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    input.payloadHash,
  ].join("\n");
  const day = input.amzDate.slice(0, 8);
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", input.amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${input.secret}`, day), input.region), input.service), "aws4_request");
  return { signedHeaders, signature: createHmac("sha256", key).update(stringToSign).digest("hex") };
}

const KEYS = {
  access_key_id: "AKIDEXAMPLE",
  secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
};
const AT = new Date("2026-11-29T12:36:00Z");
const BODY = JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 16, messages: [] });
const INVOKE = new URL(
  "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke",
);
const invoke = (headers: Record<string, string> = {}) => ({
  method: "POST",
  url: INVOKE,
  headers: { "content-type": "application/json", "user-agent": "agentnet", "x-caller": "a", ...headers },
  body: BODY,
});

const signatureOf = (authorization: string | undefined) =>
  /Signature=([0-9a-f]{64})$/.exec(authorization ?? "")?.[1];

describe("the reference SigV4 the tests check against", () => {
  it("reproduces AWS's published get-vanilla signature", () => {
    const { signedHeaders, signature } = referenceSigV4({
      method: "GET",
      canonicalUri: "/",
      canonicalQuery: "",
      headers: { host: "example.amazonaws.com", "x-amz-date": "20150830T123600Z" },
      payloadHash: sha256Hex(""),
      amzDate: "20150830T123600Z",
      region: "us-east-1",
      service: "service",
      secret: KEYS.secret_access_key,
    });
    expect(signedHeaders).toBe("host;x-amz-date");
    expect(signature).toBe("5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  });
});

describe("awsRequestSigner", () => {
  it("signs a Bedrock call as AWS computes it: the path encoded once more, only host, content-type and x-amz-*", async () => {
    const added = await awsRequestSigner(KEYS, () => AT)(invoke());
    expect(added["x-amz-date"]).toBe("20261129T123600Z");
    expect(added["x-amz-content-sha256"]).toBe(sha256Hex(BODY));
    expect(added["x-amz-security-token"]).toBeUndefined();
    const expected = referenceSigV4({
      method: "POST",
      // The model id's `:` travels as %3A; Bedrock signs the path it receives encoded once more.
      canonicalUri: "/model/anthropic.claude-sonnet-4-5-20250929-v1%253A0/invoke",
      canonicalQuery: "",
      headers: {
        "content-type": "application/json",
        host: "bedrock-runtime.us-east-1.amazonaws.com",
        "x-amz-content-sha256": sha256Hex(BODY),
        "x-amz-date": "20261129T123600Z",
      },
      payloadHash: sha256Hex(BODY),
      amzDate: "20261129T123600Z",
      region: "us-east-1",
      service: "bedrock",
      secret: KEYS.secret_access_key,
    });
    expect(added.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261129/us-east-1/bedrock/aws4_request, SignedHeaders=${expected.signedHeaders}, Signature=${expected.signature}`,
    );
  });

  it("agrees with @smithy/signature-v4 re-signing the request as received, whatever unsigned headers change", async () => {
    const added = await awsRequestSigner(KEYS, () => AT)(invoke());
    const verifier = new SignatureV4({
      service: "bedrock",
      region: "us-east-1",
      sha256: Sha256,
      credentials: { accessKeyId: KEYS.access_key_id, secretAccessKey: KEYS.secret_access_key },
    });
    const resigned = await verifier.sign(
      {
        method: "POST",
        protocol: "https:",
        hostname: INVOKE.hostname,
        path: INVOKE.pathname,
        query: {},
        headers: {
          host: INVOKE.host,
          "content-type": "application/json",
          "x-amz-date": added["x-amz-date"] ?? "",
          "x-amz-content-sha256": added["x-amz-content-sha256"] ?? "",
          "x-caller": "changed on the way",
        },
        body: BODY,
      },
      { signingDate: AT, unsignableHeaders: new Set(["x-caller"]) },
    );
    expect(signatureOf(resigned.headers.authorization)).toBe(signatureOf(added.authorization));
  });

  it("sends and signs the session token of temporary credentials", async () => {
    const added = await awsRequestSigner(
      { ...KEYS, session_token: "IQoJb3JpZ2luX2VjEXAMPLE" },
      () => AT,
    )(invoke());
    expect(added["x-amz-security-token"]).toBe("IQoJb3JpZ2luX2VjEXAMPLE");
    expect(added.authorization).toContain(
      "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token,",
    );
  });

  it("signs the query and a non-default port as sent (a listing page on a local vendor)", async () => {
    const url = new URL(
      "https://bedrock.vendor.test:8443/inference-profiles?maxResults=1000&nextToken=a%2Bb",
    );
    const added = await awsRequestSigner(
      { ...KEYS, region: "eu-west-3" },
      () => AT,
    )({
      method: "GET",
      url,
      headers: { accept: "application/json" },
      body: "",
    });
    const expected = referenceSigV4({
      method: "GET",
      canonicalUri: "/inference-profiles",
      canonicalQuery: "maxResults=1000&nextToken=a%2Bb",
      headers: {
        host: "bedrock.vendor.test:8443",
        "x-amz-content-sha256": sha256Hex(""),
        "x-amz-date": "20261129T123600Z",
      },
      payloadHash: sha256Hex(""),
      amzDate: "20261129T123600Z",
      region: "eu-west-3",
      service: "bedrock",
      secret: KEYS.secret_access_key,
    });
    expect(signatureOf(added.authorization)).toBe(expected.signature);
    expect(added.authorization).toContain("/20261129/eu-west-3/bedrock/aws4_request");
  });

  it("refuses to sign where no region can be told", async () => {
    const sign = awsRequestSigner(KEYS, () => AT);
    await expect(
      sign({ ...invoke(), url: new URL("https://bedrock.vendor.test/model/x/invoke") }),
    ).rejects.toThrow(AwsSigningError);
  });
});

describe("the region a request is signed for", () => {
  it.each([
    ["bedrock-runtime.us-east-1.amazonaws.com", "us-east-1"],
    ["bedrock-runtime-fips.us-gov-west-1.amazonaws.com", "us-gov-west-1"],
    ["bedrock.eu-central-2.amazonaws.com", "eu-central-2"],
    ["bedrock-fips.ca-central-1.amazonaws.com", "ca-central-1"],
    ["bedrock-runtime.cn-north-1.amazonaws.com.cn", "cn-north-1"],
    ["vpce-0a1b2c3d-4e5f.bedrock-runtime.ap-southeast-2.vpce.amazonaws.com", "ap-southeast-2"],
    ["BEDROCK-RUNTIME.US-WEST-2.AMAZONAWS.COM.", "us-west-2"],
  ])("%s names %s", (host, region) => {
    expect(regionOfBedrockHost(host)).toBe(region);
  });

  it.each([
    "bedrock-runtime.us-east-1.amazonaws.com.evil.example",
    "bedrock-runtime.amazonaws.com",
    "runtime.us-east-1.amazonaws.com",
    "bedrock.vendor.test",
  ])("%s names none", (host) => {
    expect(regionOfBedrockHost(host)).toBeUndefined();
  });

  it("is the host's, else the key's, else a problem saying what to do", () => {
    const aws = new URL("https://bedrock-runtime.eu-west-1.amazonaws.com");
    const local = new URL("https://bedrock.vendor.test:9443");
    expect(signingRegion(aws, { region: "us-east-1" })).toEqual({ region: "eu-west-1" });
    expect(signingRegion(local, { region: "us-east-1" })).toEqual({ region: "us-east-1" });
    expect(signingRegion(local, {})).toEqual({
      problem:
        'the upstream host bedrock.vendor.test names no AWS region to sign for: use https://bedrock-runtime.<region>.amazonaws.com, or add "region" to the access keys',
    });
  });
});

describe("VendorCredentials with Bedrock keys", () => {
  const BEDROCK = { id: "bedrock_api", auth_header_template: `Bearer ${API_KEY_TOKEN}` };
  const keys = (extra: Record<string, string> = {}) => JSON.stringify({ ...KEYS, ...extra });

  it("sends a Bedrock API key as a bearer token", () => {
    expect(new VendorCredentials().header("b1", BEDROCK, "ABSKexample")).toEqual({
      name: "authorization",
      value: "Bearer ABSKexample",
    });
  });

  it("answers a signer for access keys, the same one per provider until the key changes", async () => {
    const credentials = new VendorCredentials();
    const first = credentials.header("b2", BEDROCK, keys()) as UpstreamAuth;
    expect(first.sign).toBeTypeOf("function");
    expect(credentials.header("b2", BEDROCK, keys())).toBe(first);
    expect(credentials.header("b2", BEDROCK, keys({ region: "us-west-2" }))).not.toBe(first);
    const added = await first.sign?.(invoke());
    expect(added?.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\//,
    );
  });

  it("rejects a request it cannot sign with CredentialUnavailableError, naming no secret", async () => {
    const auth = new VendorCredentials().header("b3", BEDROCK, keys()) as UpstreamAuth;
    const failure = auth.sign?.({ ...invoke(), url: new URL("https://llm.internal/model/x/invoke") });
    await expect(failure).rejects.toThrow(CredentialUnavailableError);
    await expect(failure).rejects.toThrow(/add "region" to the access keys/);
    await expect(failure).rejects.not.toThrow(/wJalr/);
  });

  it("check refuses malformed keys, and keys with no region for an upstream that names none", () => {
    const credentials = new VendorCredentials();
    expect(() => credentials.check("bedrock_api", '{"access_key_id": "AKIA"}')).toThrow(
      /missing secret_access_key/,
    );
    expect(() =>
      credentials.check("bedrock_api", keys(), "https://bedrock-runtime.us-east-1.amazonaws.com"),
    ).not.toThrow();
    expect(() => credentials.check("bedrock_api", keys(), "https://llm.internal/bedrock")).toThrow(
      /names no AWS region/,
    );
    expect(() =>
      credentials.check("bedrock_api", keys({ region: "eu-west-3" }), "https://llm.internal/bedrock"),
    ).not.toThrow();
    expect(() => credentials.check("bedrock_api", "ABSKexample", "https://llm.internal")).not.toThrow();
  });
});
