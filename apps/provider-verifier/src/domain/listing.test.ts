import { findCatalogProvider } from "@agentnet/catalog";
import { describe, expect, it } from "vitest";
import { deriveListingTarget, fillListingPath, listingHost, upstreamHost, withQuery } from "./listing";

const listingOf = (id: string) => {
  const entry = findCatalogProvider(id);
  if (entry === undefined) throw new Error(`no catalog entry ${id}`);
  return entry.listing;
};

describe("upstreamHost", () => {
  it("keeps only the host and an explicit port; scheme and path do not matter", () => {
    expect(upstreamHost("http://API.OpenAI.com/whatever?x=1")).toMatchObject({
      host: "api.openai.com",
      port: 443,
    });
    expect(upstreamHost("https://vendor.test:8443/v1")).toMatchObject({ host: "vendor.test", port: 8443 });
    expect(upstreamHost("http://vendor.test:80/")).toMatchObject({ host: "vendor.test", port: 443 });
    expect(upstreamHost("https://user:pw@host.example/")).toMatchObject({ host: "host.example" });
    expect(upstreamHost("https://[2606:4700::1]:9000/")).toMatchObject({ host: "2606:4700::1", port: 9000 });
    expect(upstreamHost("https://0x7f.1/")).toMatchObject({ host: "127.0.0.1" });
  });

  it.each([
    "",
    "not a url",
    "api.openai.com/v1",
    "mailto:a@b.c",
    "file:///etc/passwd",
    "https://{resource}.openai.azure.com",
  ])("finds no host in %j", (url) => {
    expect(upstreamHost(url)).toBeUndefined();
  });
});

describe("deriveListingTarget", () => {
  it("dials the upstream's host at the catalog's path", () => {
    expect(deriveListingTarget(listingOf("openai_api"), "http://api.openai.com/v9/chat")).toEqual({
      kind: "dial",
      host: "api.openai.com",
      port: 443,
      path: "/v1/models",
      shape: "openai_data",
    });
    expect(deriveListingTarget(listingOf("azure_api"), "https://acme.openai.azure.com/openai")).toMatchObject(
      {
        host: "acme.openai.azure.com",
        path: "/openai/deployments?api-version=2022-12-01",
        shape: "azure_data",
      },
    );
    expect(
      deriveListingTarget(
        listingOf("vertex_api"),
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/x",
      ),
    ).toMatchObject({
      host: "europe-west4-aiplatform.googleapis.com",
      path: "/v1beta1/publishers/google/models",
    });
  });

  it("has nothing to dial without a listing or a host", () => {
    expect(deriveListingTarget(listingOf("custom"), "https://llm.internal/v1")).toEqual({
      kind: "no_listing",
    });
    expect(deriveListingTarget(listingOf("openai_api"), "openai")).toMatchObject({ kind: "no_host" });
  });

  it("only resolves a control-plane listing host, whatever the upstream path says", () => {
    const cf = listingOf("cloudflare_api");
    expect(deriveListingTarget(cf, "https://gateway.ai.cloudflare.com/v1/acc/gw/compat")).toEqual({
      kind: "resolve_only",
      host: "api.cloudflare.com",
    });
    expect(deriveListingTarget(cf, "https://gateway.ai.cloudflare.com/")).toMatchObject({
      kind: "resolve_only",
    });
  });

  it("lists Bedrock on the control plane of the runtime host's region, another host on itself", () => {
    const bedrock = listingOf("bedrock_api");
    expect(deriveListingTarget(bedrock, "https://bedrock-runtime.eu-west-3.amazonaws.com")).toEqual({
      kind: "dial",
      host: "bedrock.eu-west-3.amazonaws.com",
      port: 443,
      path: "/foundation-models",
      morePaths: ["/inference-profiles?maxResults=1000"],
      shape: "bedrock_models",
    });
    expect(
      deriveListingTarget(bedrock, "https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com/model"),
    ).toMatchObject({ host: "bedrock-fips.us-gov-west-1.amazonaws.com" });
    expect(deriveListingTarget(bedrock, "https://bedrock.vendor.test:8443")).toMatchObject({
      host: "bedrock.vendor.test",
      port: 8443,
    });
    // The catalog's default host, its region not filled in, has no host to list on.
    expect(deriveListingTarget(bedrock, "https://bedrock-runtime.{region}.amazonaws.com")).toMatchObject({
      kind: "no_host",
    });
    expect(listingHost("openai_data", "bedrock-runtime.us-east-1.amazonaws.com")).toBe(
      "bedrock-runtime.us-east-1.amazonaws.com",
    );
  });

  it("refuses a dial target whose path placeholder the upstream cannot fill", () => {
    const listing = { path: "/v1/projects/{project}/models", shape: "openai_data" as const };
    expect(deriveListingTarget(listing, "https://vendor.test/v1/other")).toEqual({
      kind: "no_host",
      why: "upstream_url does not say the listing's {project}",
    });
  });
});

describe("fillListingPath", () => {
  const fill = (path: string, url: string) => {
    const upstream = upstreamHost(url);
    if (upstream === undefined) throw new Error("no host");
    return fillListingPath(path, upstream);
  };

  it("reads Cloudflare's account id from the first segment after /v1/", () => {
    expect(
      fill(
        "/client/v4/accounts/{account_id}/ai-gateway/gateways",
        "https://gateway.ai.cloudflare.com/v1/abc123/my-gw/compat",
      ),
    ).toEqual({ ok: true, path: "/client/v4/accounts/abc123/ai-gateway/gateways" });
  });

  it("reads Vertex project and location from the path, the region from the host otherwise", () => {
    const url =
      "https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers";
    expect(fill("/v1/projects/{project}/locations/{location}/x", url)).toEqual({
      ok: true,
      path: "/v1/projects/my-proj/locations/us-east5/x",
    });
    expect(fill("/{region}", "https://europe-west1-aiplatform.googleapis.com/")).toEqual({
      ok: true,
      path: "/europe-west1",
    });
  });

  it("reads the Azure resource from the host and the deployment from the path", () => {
    expect(
      fill("/{resource}/{deployment}", "https://acme.openai.azure.com/openai/deployments/gpt4o-prod/chat"),
    ).toEqual({ ok: true, path: "/acme/gpt4o-prod" });
  });

  it("escapes values so a path segment cannot add path or query", () => {
    expect(fill("/a/{account_id}/b", "https://h.example/v1/x%2F..%3Fq=1/")).toEqual({
      ok: true,
      path: "/a/x%2F..%3Fq%3D1/b",
    });
  });

  it("names a placeholder it cannot fill", () => {
    expect(fill("/{account_id}", "https://gateway.ai.cloudflare.com/")).toEqual({
      ok: false,
      missing: "account_id",
    });
  });
});

describe("withQuery", () => {
  it("adds pagination to a path with or without a query", () => {
    expect(withQuery("/v1/models", { after_id: "m 2" })).toBe("/v1/models?after_id=m+2");
    expect(withQuery("/openai/deployments?api-version=2022-12-01", { pageToken: "t" })).toBe(
      "/openai/deployments?api-version=2022-12-01&pageToken=t",
    );
  });
});
