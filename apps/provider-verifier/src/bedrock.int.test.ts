import { request } from "@agentnet/bus";
import { findCatalogModel } from "@agentnet/catalog";
import { AppError, VERIFY_REFUSALS } from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BEDROCK_KEYS, BEDROCK_REGION, BEDROCK_SESSION_TOKEN } from "./test-support/bedrock-vendor";
import { type Harness, startHarness } from "./test-support/harness";
import { GOOD_KEY } from "./test-support/vendors";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ timeoutMs: 2_000, maxPages: 3 });
});
afterAll(async () => {
  await h?.stop();
});

const HOST = "bedrock.vendor.test";
const accessKeys = (extra: Record<string, string> = {}) =>
  JSON.stringify({ ...BEDROCK_KEYS, region: BEDROCK_REGION, ...extra });

const verify = (api_key: string) =>
  request(h.nc, h.endpoints.verifyProvider, {
    catalog_provider_id: "bedrock_api",
    upstream_url: h.upstream(HOST, "/"),
    api_key,
    skip_tls_verification: false,
  });

const discover = (api_key: string) =>
  request(h.nc, h.endpoints.discover, {
    catalog_provider_id: "bedrock_api",
    upstream_url: h.upstream(HOST, "/"),
    api_key,
  });

const refusalOf = async (reply: Promise<unknown>) => {
  const error = await reply.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  expect(error.message).not.toContain(BEDROCK_KEYS.secret_access_key);
  return { status: error.status, code: error.code, message: error.message };
};

const sentSince = (before: number) => h.vendors.seenBy(HOST).slice(before);

describe("Bedrock credentials at the verifier", () => {
  it("verifies a Bedrock API key as a bearer token on the first listing path", async () => {
    const before = h.vendors.seenBy(HOST).length;
    await expect(verify(GOOD_KEY)).resolves.toEqual({ outcome: "verified" });
    const sent = sentSince(before);
    expect(sent.map((r) => r.path)).toEqual(["/foundation-models"]);
    expect(sent[0]?.headers.authorization).toBe(`Bearer ${GOOD_KEY}`);
  });

  it("verifies IAM access keys by a SigV4 signature the vendor re-computes, sending no secret", async () => {
    const before = h.vendors.seenBy(HOST).length;
    await expect(verify(accessKeys())).resolves.toEqual({ outcome: "verified" });
    const [seen] = sentSince(before);
    expect(seen?.headers.authorization).toMatch(
      new RegExp(
        `^AWS4-HMAC-SHA256 Credential=${BEDROCK_KEYS.access_key_id}/\\d{8}/${BEDROCK_REGION}/bedrock/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$`,
      ),
    );
    expect(seen?.headers["x-amz-date"]).toMatch(/^\d{8}T\d{6}Z$/);
    expect(JSON.stringify(seen?.headers)).not.toContain(BEDROCK_KEYS.secret_access_key);
  });

  it("sends and signs the session token of temporary credentials", async () => {
    const before = h.vendors.seenBy(HOST).length;
    await expect(verify(accessKeys({ session_token: BEDROCK_SESSION_TOKEN }))).resolves.toEqual({
      outcome: "verified",
    });
    const [seen] = sentSince(before);
    expect(seen?.headers["x-amz-security-token"]).toBe(BEDROCK_SESSION_TOKEN);
    expect(seen?.headers.authorization).toContain("x-amz-date;x-amz-security-token,");
  });

  it("refuses a wrong API key or a wrong secret as the vendor rejects them", async () => {
    for (const key of ["ABSK-wrong-key", accessKeys({ secret_access_key: "not-the-secret" })]) {
      expect(await refusalOf(verify(key))).toEqual({
        status: 422,
        code: VERIFY_REFUSALS.rejectedCredential,
        message: "the vendor rejected the credential (HTTP 403)",
      });
    }
  });

  it("refuses, without sending anything, access keys with no region for a host that names none", async () => {
    const before = h.vendors.seenBy(HOST).length;
    const { region: _region, ...keys } = JSON.parse(accessKeys()) as Record<string, string>;
    const refusal = await refusalOf(verify(JSON.stringify(keys)));
    expect(refusal).toMatchObject({ status: 422, code: VERIFY_REFUSALS.rejectedCredential });
    expect(refusal.message).toMatch(/names no AWS region.*add "region" to the access keys/);
    expect(await refusalOf(discover(JSON.stringify(keys)))).toMatchObject({
      code: VERIFY_REFUSALS.rejectedCredential,
    });
    expect(sentSince(before)).toEqual([]);
  });

  it("discovers foundation models callable on demand and every inference profile page, priced by the catalog", async () => {
    for (const key of [GOOD_KEY, accessKeys()]) {
      const before = h.vendors.seenBy(HOST).length;
      const { models } = await discover(key);
      expect(models.map((m) => [m.id, m.pricing_known])).toEqual([
        ["anthropic.claude-sonnet-4-20250514-v1:0", true],
        ["amazon.nova-pro-v1:0", false],
        ["global.anthropic.claude-sonnet-4-5-20250929-v1:0", true],
        ["eu.anthropic.claude-sonnet-4-5-20250929-v1:0", true],
      ]);
      // The EU profile bills the regional rate, 10% above the global one.
      expect(models[3]?.input_per_1k).toBe(
        findCatalogModel("bedrock_api", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0")?.input_per_1k,
      );
      expect(models[3]?.input_per_1k).toBe(0.0033);
      expect(sentSince(before).map((r) => r.path)).toEqual([
        "/foundation-models",
        "/inference-profiles?maxResults=1000",
        "/inference-profiles?maxResults=1000&nextToken=page%2B2",
      ]);
    }
  });
});
