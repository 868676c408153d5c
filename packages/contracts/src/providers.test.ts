import { describe, expect, it } from "vitest";
import {
  CreateProviderBody,
  normaliseExtraValues,
  Provider,
  ProviderModel,
  UpdateProviderBody,
} from "./providers";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeProviderModel = (overrides: Record<string, unknown> = {}) => ({
  id: "gpt-4o-mini",
  input_per_1k: 0.00015,
  output_per_1k: 0.0006,
  ...overrides,
});

const makeProviderBody = (overrides: Record<string, unknown> = {}) => ({
  provider_id: "openai_api",
  name: "OpenAI production",
  upstream_url: "https://api.openai.com/v1",
  api_key: "sk-test",
  ...overrides,
});

const makeProvider = (overrides: Partial<Provider> = {}): Provider => ({
  id: "prov-1",
  provider_id: "openai_api",
  name: "OpenAI production",
  upstream_url: "https://api.openai.com/v1",
  models: [],
  extra_values: {},
  identity_header_user_id: "",
  identity_header_groups: "",
  enabled: true,
  skip_tls_verification: false,
  metadata_disabled: false,
  created_at: "2025-01-01T00:00:00Z",
  updated_at: "2025-01-01T00:00:00Z",
  ...overrides,
});

describe("ProviderModel", () => {
  it("accepts the required rates alone", () => {
    expect(ProviderModel.parse(makeProviderModel())).toEqual(makeProviderModel());
  });

  it("accepts every optional cache rate, 0 included", () => {
    const model = makeProviderModel({
      cached_input_per_1k: 0,
      cache_read_per_1k: 0.0001,
      cache_creation_per_1k: 0,
    });
    expect(ProviderModel.parse(model)).toEqual(model);
  });

  it.each(["id", "input_per_1k", "output_per_1k"])("requires %s", (field) => {
    const { [field as "id"]: _dropped, ...rest } = makeProviderModel();
    expect(issuePaths(ProviderModel.safeParse(rest))).toEqual([field]);
  });

  it.each([
    "input_per_1k",
    "output_per_1k",
    "cached_input_per_1k",
    "cache_read_per_1k",
    "cache_creation_per_1k",
  ])("rejects a negative %s", (field) => {
    expect(issuePaths(ProviderModel.safeParse(makeProviderModel({ [field]: -0.1 })))).toEqual([field]);
  });

  it("rejects an empty id", () => {
    expect(issuePaths(ProviderModel.safeParse(makeProviderModel({ id: " " })))).toEqual(["id"]);
  });
});

describe("Provider", () => {
  it("parses a stored provider", () => {
    expect(Provider.parse(makeProvider())).toEqual(makeProvider());
  });

  it("never carries api_key, even when the record holds one", () => {
    expect(Provider.parse({ ...makeProvider(), api_key: "sk-secret" })).not.toHaveProperty("api_key");
  });
});

describe("CreateProviderBody", () => {
  it("applies the defaults", () => {
    expect(CreateProviderBody.parse(makeProviderBody())).toEqual({
      ...makeProviderBody(),
      models: [],
      extra_values: {},
      identity_header_user_id: "",
      identity_header_groups: "",
      enabled: true,
      skip_tls_verification: false,
      metadata_disabled: false,
    });
  });

  it("keeps explicit values", () => {
    const body = makeProviderBody({
      models: [makeProviderModel()],
      extra_values: { "OpenAI-Organization": "org-1" },
      identity_header_user_id: "X-User-Id",
      identity_header_groups: "x-groups",
      enabled: false,
      skip_tls_verification: true,
      metadata_disabled: true,
    });
    expect(CreateProviderBody.parse(body)).toEqual(body);
  });

  it.each(["provider_id", "name", "upstream_url", "api_key"])("requires %s", (field) => {
    const { [field as "name"]: _dropped, ...rest } = makeProviderBody();
    expect(issuePaths(CreateProviderBody.safeParse(rest))).toEqual([field]);
  });

  it("rejects an empty api_key", () => {
    expect(issuePaths(CreateProviderBody.safeParse(makeProviderBody({ api_key: "" })))).toEqual(["api_key"]);
  });

  it.each(["openai", "Custom", "my provider"])("rejects the catalog id %j", (provider_id) => {
    expect(issuePaths(CreateProviderBody.safeParse(makeProviderBody({ provider_id })))).toEqual([
      "provider_id",
    ]);
  });

  it("accepts the custom catalog id", () => {
    expect(CreateProviderBody.safeParse(makeProviderBody({ provider_id: "custom" })).success).toBe(true);
  });

  it.each(["api.openai.com/v1", "/v1", "ftp://api.openai.com"])(
    "rejects the upstream_url %j",
    (upstream_url) => {
      expect(issuePaths(CreateProviderBody.safeParse(makeProviderBody({ upstream_url })))).toEqual([
        "upstream_url",
      ]);
    },
  );

  it.each(["identity_header_user_id", "identity_header_groups"])(
    "rejects an invalid header name in %s",
    (field) => {
      expect(issuePaths(CreateProviderBody.safeParse(makeProviderBody({ [field]: "x user" })))).toEqual([
        field,
      ]);
      expect(issuePaths(CreateProviderBody.safeParse(makeProviderBody({ [field]: "x:y" })))).toEqual([field]);
    },
  );

  it("rejects an extra value carrying a line break", () => {
    const extra_values = { "OpenAI-Organization": "org-1\r\nX-Evil: 1" };
    expect(issuePaths(CreateProviderBody.safeParse(makeProviderBody({ extra_values })))).toEqual([
      "extra_values.OpenAI-Organization",
    ]);
  });

  it("rejects an extra value keyed by an invalid header name", () => {
    const result = CreateProviderBody.safeParse(makeProviderBody({ extra_values: { "bad header": "v" } }));
    expect(issuePaths(result)).toEqual(["extra_values.bad header"]);
  });

  it("rejects a non-string extra value", () => {
    expect(issuePaths(CreateProviderBody.safeParse(makeProviderBody({ extra_values: { a: 1 } })))).toEqual([
      "extra_values.a",
    ]);
  });

  it("rejects two rows for one model", () => {
    const models = [makeProviderModel(), makeProviderModel({ output_per_1k: 1 })];
    expect(issuePaths(CreateProviderBody.safeParse(makeProviderBody({ models })))).toEqual(["models.1.id"]);
  });

  it("strips response-only fields", () => {
    const body = CreateProviderBody.parse(
      makeProviderBody({ id: "prov-9", created_at: "x", updated_at: "y" }),
    );
    expect(body).not.toHaveProperty("id");
    expect(body).not.toHaveProperty("created_at");
  });
});

describe("UpdateProviderBody", () => {
  it("accepts a body without api_key and applies no defaults", () => {
    const { api_key: _dropped, ...rest } = makeProviderBody();
    expect(UpdateProviderBody.parse(rest)).toEqual(rest);
  });

  it("accepts a new api_key", () => {
    expect(UpdateProviderBody.parse(makeProviderBody({ api_key: "sk-new" })).api_key).toBe("sk-new");
  });

  it.each(["provider_id", "name", "upstream_url"])("requires %s", (field) => {
    const { [field as "name"]: _dropped, ...rest } = makeProviderBody();
    expect(issuePaths(UpdateProviderBody.safeParse(rest))).toEqual([field]);
  });

  it("rejects an empty api_key", () => {
    expect(issuePaths(UpdateProviderBody.safeParse(makeProviderBody({ api_key: "" })))).toEqual(["api_key"]);
  });

  it("validates the optional fields when sent", () => {
    const body = makeProviderBody({ models: [makeProviderModel({ input_per_1k: -1 })], enabled: "no" });
    expect(issuePaths(UpdateProviderBody.safeParse(body))).toEqual(["models.0.input_per_1k", "enabled"]);
  });
});

describe("normaliseExtraValues", () => {
  it("drops keys whose value is the empty string and keeps the rest", () => {
    expect(normaliseExtraValues({ "X-A": "1", "X-B": "", "X-C": " " })).toEqual({ "X-A": "1", "X-C": " " });
  });

  it("does not change its input", () => {
    const input = { "X-B": "" };
    normaliseExtraValues(input);
    expect(input).toEqual({ "X-B": "" });
  });
});

describe("anthropic_betas", () => {
  const betas = ["context-1m-2025-08-07", "interleaved-thinking-2025-05-14"];

  it("is stored as written on create, and left out when omitted", () => {
    expect(CreateProviderBody.parse(makeProviderBody({ anthropic_betas: betas })).anthropic_betas).toEqual(
      betas,
    );
    expect(CreateProviderBody.parse(makeProviderBody())).not.toHaveProperty("anthropic_betas");
  });

  it("takes null on update to clear it, and an empty list that lets no beta through", () => {
    expect(UpdateProviderBody.parse(makeProviderBody({ anthropic_betas: null })).anthropic_betas).toBeNull();
    expect(UpdateProviderBody.parse(makeProviderBody({ anthropic_betas: [] })).anthropic_betas).toEqual([]);
  });

  it.each([
    ["a comma, which would split the header", "a,b"],
    ["a line break, which would inject a header", "a\r\nx-evil: 1"],
    ["upper case", "Context-1m"],
    ["a space", "context 1m"],
    ["nothing", ""],
    ["65 characters", "a".repeat(65)],
  ])("refuses a value holding %s", (_what, value) => {
    const body = makeProviderBody({ anthropic_betas: ["context-1m-2025-08-07", value] });
    expect(issuePaths(CreateProviderBody.safeParse(body))).toEqual(["anthropic_betas.1"]);
    expect(issuePaths(UpdateProviderBody.safeParse(body))).toEqual(["anthropic_betas.1"]);
  });

  it("takes 64 values and refuses 65", () => {
    const list = (count: number) => Array.from({ length: count }, (_, index) => `beta-${index}`);
    expect(CreateProviderBody.safeParse(makeProviderBody({ anthropic_betas: list(64) })).success).toBe(true);
    expect(issuePaths(UpdateProviderBody.safeParse(makeProviderBody({ anthropic_betas: list(65) })))).toEqual(
      ["anthropic_betas"],
    );
  });

  it("reads back on a provider, and a provider without one still reads", () => {
    expect(Provider.parse(makeProvider({ anthropic_betas: betas })).anthropic_betas).toEqual(betas);
    expect(Provider.parse(makeProvider())).not.toHaveProperty("anthropic_betas");
  });
});
