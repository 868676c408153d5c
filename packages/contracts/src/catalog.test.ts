import { describe, expect, it } from "vitest";
import {
  API_KEY_TOKEN,
  CatalogModel,
  CatalogProvider,
  CatalogProviderId,
  DiscoveredModel,
  DiscoverModelsBody,
  DiscoverModelsReply,
  renderAuthHeader,
  UpstreamUrl,
} from "./catalog";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeCatalogModel = (overrides: Partial<CatalogModel> = {}): CatalogModel => ({
  id: "gpt-4o-mini",
  label: "GPT-4o mini",
  input_per_1k: 0.00015,
  output_per_1k: 0.0006,
  cached_input_per_1k: 0.000075,
  cache_read_per_1k: 0,
  cache_creation_per_1k: 0,
  context_window: 128_000,
  ...overrides,
});

const makeCatalogProvider = (overrides: Partial<CatalogProvider> = {}): CatalogProvider => ({
  id: "openai_api",
  name: "OpenAI",
  description: "OpenAI API",
  default_host: "api.openai.com",
  auth_header_template: `Bearer ${API_KEY_TOKEN}`,
  default_content_type: "application/json",
  brand_color: "#10a37f",
  kind: "llm",
  extra_headers: [{ name: "OpenAI-Organization", description: "organisation id", required: false }],
  identity_injection: {
    header_pair: { customizable: true, end_user_id_header: "x-end-user-id", tags_header: "x-tags" },
  },
  pricing_surfaces: ["chat_completions"],
  models: [makeCatalogModel()],
  api_flavor: "openai",
  listing: { path: "/v1/models", shape: "openai_data" },
  ...overrides,
});

const makeDiscoverBody = (overrides: Record<string, unknown> = {}) => ({
  catalog_provider_id: "openai_api",
  upstream_url: "https://api.openai.com/v1",
  api_key: "sk-test",
  ...overrides,
});

describe("CatalogProviderId", () => {
  it.each(["openai_api", "anthropic_api", "azure_api", "custom"])("accepts %s", (id) => {
    expect(CatalogProviderId.safeParse(id).success).toBe(true);
  });

  it.each(["openai", "OpenAI_api", "_api", "custom_api_x", "custom2", ""])("rejects %j", (id) => {
    expect(CatalogProviderId.safeParse(id).success).toBe(false);
  });
});

describe("CatalogProvider", () => {
  it("parses a complete entry", () => {
    expect(CatalogProvider.parse(makeCatalogProvider())).toEqual(makeCatalogProvider());
  });

  it("accepts an entry without a listing endpoint and with both identity styles", () => {
    const entry = makeCatalogProvider({
      listing: null,
      identity_injection: {
        json_metadata: { customizable: false, header: "x-metadata", user_key: "user", groups_key: "groups" },
      },
    });
    expect(CatalogProvider.safeParse(entry).success).toBe(true);
  });

  it("accepts a control-plane listing host", () => {
    const listing = {
      path: "/v1/publishers/google/models",
      host: "aiplatform.googleapis.com",
      shape: "vertex_publisher_models" as const,
    };
    expect(CatalogProvider.safeParse(makeCatalogProvider({ listing })).success).toBe(true);
  });

  it("requires the API_KEY substitution token in auth_header_template", () => {
    expect(
      issuePaths(CatalogProvider.safeParse(makeCatalogProvider({ auth_header_template: "Bearer KEY" }))),
    ).toEqual(["auth_header_template"]);
  });

  it.each(["10a37f", "#10a37", "#10a37fz", "green"])("rejects the brand color %j", (brand_color) => {
    expect(issuePaths(CatalogProvider.safeParse(makeCatalogProvider({ brand_color })))).toEqual([
      "brand_color",
    ]);
  });

  it("requires a name on every extra header", () => {
    const entry = { ...makeCatalogProvider(), extra_headers: [{ description: "x" }] };
    expect(issuePaths(CatalogProvider.safeParse(entry))).toEqual(["extra_headers.0.name"]);
  });

  it("rejects an unknown api_flavor", () => {
    expect(issuePaths(CatalogProvider.safeParse({ ...makeCatalogProvider(), api_flavor: "soap" }))).toEqual([
      "api_flavor",
    ]);
  });

  it("rejects a listing path that is not absolute", () => {
    const entry = { ...makeCatalogProvider(), listing: { path: "v1/models", shape: "openai_data" } };
    expect(issuePaths(CatalogProvider.safeParse(entry))).toEqual(["listing.path"]);
  });

  it("takes further listing paths on the same host, each absolute (Bedrock's inference profiles)", () => {
    const listing = {
      path: "/foundation-models",
      more_paths: ["/inference-profiles?maxResults=1000"],
      shape: "bedrock_models" as const,
    };
    const entry = makeCatalogProvider({ api_flavor: "bedrock", listing });
    expect(CatalogProvider.safeParse(entry).success).toBe(true);
    const relative = { ...entry, listing: { ...listing, more_paths: ["inference-profiles"] } };
    expect(issuePaths(CatalogProvider.safeParse(relative))).toEqual(["listing.more_paths.0"]);
  });

  it("rejects an unknown listing shape", () => {
    const entry = { ...makeCatalogProvider(), listing: { path: "/v1/models", shape: "xml" } };
    expect(issuePaths(CatalogProvider.safeParse(entry))).toEqual(["listing.shape"]);
  });

  it("requires every member of a header_pair", () => {
    const entry = { ...makeCatalogProvider(), identity_injection: { header_pair: { customizable: true } } };
    expect(issuePaths(CatalogProvider.safeParse(entry))).toEqual([
      "identity_injection.header_pair.end_user_id_header",
      "identity_injection.header_pair.tags_header",
    ]);
  });

  it("rejects a negative model rate", () => {
    expect(issuePaths(CatalogModel.safeParse(makeCatalogModel({ cache_read_per_1k: -1 })))).toEqual([
      "cache_read_per_1k",
    ]);
  });

  it("renders the auth header", () => {
    expect(renderAuthHeader(`Bearer ${API_KEY_TOKEN}`, "sk-1")).toBe("Bearer sk-1");
  });
});

describe("UpstreamUrl", () => {
  it.each(["https://api.openai.com/v1", "http://localhost:11434/v1", "https://10.1.2.3:8443"])(
    "accepts %s",
    (url) => {
      expect(UpstreamUrl.safeParse(url).success).toBe(true);
    },
  );

  it.each(["api.openai.com/v1", "ftp://files.example.com", "https://", ""])("rejects %j", (url) => {
    expect(UpstreamUrl.safeParse(url).success).toBe(false);
  });

  it.each([
    ["https://api.openai.com/v1\r", "U+000D"],
    ["https://api.openai.com/v1\n", "U+000A"],
    ["https://api.open\tai.com/v1", "U+0009"],
    ["https://api.openai.com\u0000/v1", "U+0000"],
    ["https://api.openai.com/my v1", "U+0020"],
    [" https://api.openai.com/v1", "U+0020"],
    ["https://api.openai.com/v1\u0085", "U+0085"],
    ["https://api.openai.com/\u00a0v1", "U+00A0"],
  ])("refuses %j, which the URL parser would read otherwise, naming %s", (url, character) => {
    expect(UpstreamUrl.safeParse(url).error?.issues.map((issue) => issue.message)).toEqual([
      `must not contain whitespace or control characters (${character})`,
    ]);
  });

  it("is kept as written: reads echo it and sending it again is no change", () => {
    expect(UpstreamUrl.parse("https://api.openai.com")).toBe("https://api.openai.com");
  });
});

describe("DiscoverModelsBody", () => {
  it("accepts api_key with upstream_url", () => {
    expect(DiscoverModelsBody.safeParse(makeDiscoverBody()).success).toBe(true);
  });

  it("accepts provider_id alone, or with an overriding upstream_url", () => {
    const byProvider = { catalog_provider_id: "openai_api", provider_id: "prov-1" };
    expect(DiscoverModelsBody.safeParse(byProvider).success).toBe(true);
    expect(
      DiscoverModelsBody.safeParse({ ...byProvider, upstream_url: "https://eu.api.example.com" }).success,
    ).toBe(true);
  });

  it("requires catalog_provider_id", () => {
    const { catalog_provider_id: _dropped, ...rest } = makeDiscoverBody();
    expect(issuePaths(DiscoverModelsBody.safeParse(rest))).toEqual(["catalog_provider_id"]);
  });

  it("rejects api_key together with provider_id", () => {
    expect(issuePaths(DiscoverModelsBody.safeParse(makeDiscoverBody({ provider_id: "prov-1" })))).toEqual([
      "provider_id",
    ]);
  });

  it("rejects neither api_key nor provider_id", () => {
    expect(issuePaths(DiscoverModelsBody.safeParse({ catalog_provider_id: "openai_api" }))).toEqual([
      "api_key",
    ]);
  });

  it("rejects api_key without upstream_url", () => {
    const { upstream_url: _dropped, ...rest } = makeDiscoverBody();
    expect(issuePaths(DiscoverModelsBody.safeParse(rest))).toEqual(["upstream_url"]);
  });

  it("rejects an empty api_key", () => {
    expect(issuePaths(DiscoverModelsBody.safeParse(makeDiscoverBody({ api_key: "" })))).toEqual(["api_key"]);
  });

  it("rejects an upstream_url without a scheme", () => {
    expect(
      issuePaths(DiscoverModelsBody.safeParse(makeDiscoverBody({ upstream_url: "api.openai.com" }))),
    ).toEqual(["upstream_url"]);
  });
});

describe("DiscoverModelsReply", () => {
  const discovered = {
    id: "gpt-4o-mini",
    label: "GPT-4o mini",
    pricing_known: false,
    input_per_1k: 0,
    output_per_1k: 0,
    cached_input_per_1k: 0,
    cache_read_per_1k: 0,
    cache_creation_per_1k: 0,
  };

  it("parses discovered models", () => {
    expect(DiscoverModelsReply.parse({ models: [discovered] })).toEqual({ models: [discovered] });
  });

  it("requires pricing_known", () => {
    const { pricing_known: _dropped, ...rest } = discovered;
    expect(issuePaths(DiscoveredModel.safeParse(rest))).toEqual(["pricing_known"]);
  });
});
