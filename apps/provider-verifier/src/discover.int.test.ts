import { request } from "@agentnet/bus";
import { findCatalogModel, findCatalogProvider } from "@agentnet/catalog";
import { AppError, type DiscoverRequest, VERIFY_REFUSALS } from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, PRIVATE_HOST, startHarness } from "./test-support/harness";
import { GOOD_KEY } from "./test-support/vendors";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ timeoutMs: 2_000, maxPages: 3 });
});
afterAll(async () => {
  await h?.stop();
});

const discover = (
  body: Omit<DiscoverRequest, "api_key" | "skip_tls_verification"> & Partial<DiscoverRequest>,
) => request(h.nc, h.endpoints.discover, { api_key: GOOD_KEY, ...body });

const refusalOf = async (reply: Promise<unknown>) => {
  const error = await reply.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  expect(error.message).not.toContain(GOOD_KEY);
  return { status: error.status, code: error.code, message: error.message };
};

describe("discover", () => {
  it("lists an OpenAI-style vendor's models, priced by id or alias, unknown ones at zero", async () => {
    const { models } = await discover({
      catalog_provider_id: "openai_api",
      upstream_url: h.upstream("ok.vendor.test"),
    });
    const gpt4o = findCatalogModel("openai_api", "gpt-4o");
    expect(models.map((m) => [m.id, m.pricing_known])).toEqual([
      ["gpt-4o", true],
      ["gpt-4o-2024-08-06", true],
      ["ft:gpt-4o:acme:custom", false],
    ]);
    expect(models[0]).toMatchObject({
      input_per_1k: gpt4o?.input_per_1k,
      output_per_1k: gpt4o?.output_per_1k,
    });
    expect(models[1]?.input_per_1k).toBe(gpt4o?.input_per_1k);
    expect(models[2]).toMatchObject({ label: "ft:gpt-4o:acme:custom", input_per_1k: 0, output_per_1k: 0 });
  });

  it("follows Anthropic's pagination with after_id", async () => {
    const { models } = await discover({
      catalog_provider_id: "anthropic_api",
      upstream_url: h.upstream("anthropic.vendor.test"),
    });
    expect(models.map((m) => [m.id, m.label, m.pricing_known])).toEqual([
      ["claude-sonnet-4-20250514", "Claude Sonnet 4", true],
      ["claude-opus-4-1-20250805", "Claude Opus 4.1", true],
      ["claude-next-1", "Claude Next", false],
    ]);
    expect(models[0]?.cache_read_per_1k).toBe(
      findCatalogModel("anthropic_api", "claude-sonnet-4")?.cache_read_per_1k,
    );
    expect(h.vendors.seenBy("anthropic.vendor.test").map((r) => r.path)).toEqual([
      "/v1/models",
      "/v1/models?after_id=claude-opus-4-1-20250805",
    ]);
  });

  it("stops paginating at the page limit", async () => {
    const { models } = await discover({
      catalog_provider_id: "anthropic_api",
      upstream_url: h.upstream("endless.vendor.test"),
    });
    expect(models.map((m) => m.id)).toEqual(["m-1", "m-2", "m-3"]);
  });

  it("lists Azure deployments by deployment id, priced by their model", async () => {
    const { models } = await discover({
      catalog_provider_id: "azure_api",
      upstream_url: h.upstream("azure.vendor.test", "/openai"),
    });
    expect(models).toEqual([
      expect.objectContaining({
        id: "prod-4o",
        label: "prod-4o (gpt-4o)",
        pricing_known: true,
        input_per_1k: findCatalogModel("azure_api", "gpt-4o")?.input_per_1k,
      }),
      expect.objectContaining({ id: "lab", pricing_known: false, input_per_1k: 0 }),
    ]);
    expect(h.vendors.seenBy("azure.vendor.test")[0]?.headers["api-key"]).toBe(GOOD_KEY);
  });

  it("answers a Cloudflare gateway with the catalog's model list, contacting nothing", async () => {
    const asked = h.resolvedNames.length;
    const { models } = await discover({
      catalog_provider_id: "cloudflare_api",
      upstream_url: "https://gateway.ai.cloudflare.com/v1/acc/gw/compat",
    });
    expect(models).toHaveLength(findCatalogProvider("cloudflare_api")?.models.length ?? -1);
    expect(models.every((m) => m.pricing_known)).toBe(true);
    expect(h.resolvedNames).toHaveLength(asked);
  });

  it("refuses an entry without a listing endpoint: use the catalog's own list", async () => {
    expect(
      await refusalOf(discover({ catalog_provider_id: "custom", upstream_url: "https://llm.example/v1" })),
    ).toMatchObject({
      status: 422,
      code: VERIFY_REFUSALS.noListing,
      message: expect.stringMatching(/use the catalog's own model list/),
    });
  });

  it("refuses a private upstream, saying the address is not public", async () => {
    expect(
      await refusalOf(
        discover({ catalog_provider_id: "openai_api", upstream_url: h.upstream(PRIVATE_HOST) }),
      ),
    ).toMatchObject({
      status: 422,
      code: VERIFY_REFUSALS.unreachable,
      message: expect.stringMatching(/127\.0\.0\.1, a loopback address that is not public/),
    });
    expect(h.vendors.seenBy(PRIVATE_HOST)).toEqual([]);
  });

  it("refuses an upstream with TLS verification skipped, without dialing", async () => {
    expect(
      await refusalOf(
        discover({
          catalog_provider_id: "openai_api",
          upstream_url: h.upstream("ok.vendor.test"),
          skip_tls_verification: true,
        }),
      ),
    ).toMatchObject({ status: 422, code: VERIFY_REFUSALS.unreachable });
  });

  it("passes on the vendor's refusal of the credential", async () => {
    expect(
      await refusalOf(
        discover({ catalog_provider_id: "openai_api", upstream_url: h.upstream("denied.vendor.test") }),
      ),
    ).toEqual({
      status: 422,
      code: VERIFY_REFUSALS.rejectedCredential,
      message: "the vendor rejected the credential (HTTP 401)",
    });
  });
});
