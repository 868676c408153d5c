import { describe, expect, it } from "vitest";
import { BootstrapAccountBody, UpdateAccountBody } from "./account";
import { BudgetRuleBody } from "./budget-rules";
import { DiscoverModelsBody } from "./catalog";
import { Description, ModelName, ResourceName } from "./common";
import { GuardrailBody } from "./guardrails";
import { LimitsBody } from "./limits";
import { PolicyBody } from "./policies";
import { CreateProviderBody, Provider, UpdateProviderBody } from "./providers";
import { UpdateSettingsBody } from "./settings";
import {
  MAX_API_KEY_LENGTH,
  MAX_CAP_USD,
  MAX_EXTRA_VALUES,
  MAX_ID_LIST,
  MAX_MODEL_LENGTH,
  MAX_MODELS,
  MAX_RATE_PER_1K,
  MAX_RETENTION_DAYS,
  MAX_URL_LENGTH,
  MAX_WINDOW_SECONDS,
} from "./sizes";
import { forbiddenCharacter } from "./text";
import { CreateUserBody } from "./users";

const issues = (result: { error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  (result.error?.issues ?? []).map((issue) => `${issue.path.join(".")}: ${issue.message}`);

const makeProviderBody = (overrides: Record<string, unknown> = {}) => ({
  provider_id: "custom",
  name: "Local",
  upstream_url: "https://llm.example.com/v1",
  api_key: "sk-test",
  ...overrides,
});

const model = (overrides: Record<string, unknown> = {}) => ({
  id: "m",
  input_per_1k: 0.001,
  output_per_1k: 0.002,
  ...overrides,
});

const makeLimits = (budget: Record<string, unknown> = {}, tokens: Record<string, unknown> = {}) => ({
  token_limit: { enabled: true, group_cap: 0, user_cap: 1_000, window_seconds: 3600, ...tokens },
  budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 5, window_seconds: 3600, ...budget },
});

describe("display text", () => {
  it("refuses bidirectional overrides and isolates, control characters and lone surrogates", () => {
    for (const text of [
      "admin\u202Etxt.exe",
      "a\u202Ab",
      "a\u2066b\u2069",
      "nul\u0000",
      "del\u007F",
      "c1\u0085",
      "half\uD800",
    ]) {
      expect(forbiddenCharacter(text), JSON.stringify(text)).toBeDefined();
      expect(ResourceName.safeParse(text).success, JSON.stringify(text)).toBe(false);
    }
    expect(issues(ResourceName.safeParse("evil\u202Egnp.exe"))).toEqual([
      ": name must not contain bidirectional control characters (U+202E)",
    ]);
  });

  it("accepts names in any script, mixed-script look-alikes, emoji and the right-to-left marks", () => {
    for (const name of ["Аll", "Ingeniería", "研究チーム", "فريق\u200F", "Ωmega team", "🚀 launch"]) {
      expect(ResourceName.parse(name)).toBe(name);
    }
  });

  it("lets a description hold tabs and line breaks but not a bidirectional override", () => {
    expect(Description.parse("line one\n\tline two\r\n")).toBe("line one\n\tline two\r\n");
    expect(Description.safeParse("caps \u202Ereversed").success).toBe(false);
  });

  it("bounds a model name to 256 characters of display text", () => {
    expect(ModelName.parse("x".repeat(MAX_MODEL_LENGTH))).toHaveLength(MAX_MODEL_LENGTH);
    expect(issues(ModelName.safeParse("x".repeat(MAX_MODEL_LENGTH + 1)))).toEqual([
      ": model must be at most 256 characters",
    ]);
    expect(ModelName.safeParse("gpt\n4o").success).toBe(false);
  });
});

describe("provider bodies", () => {
  it("refuse a 700,000-character model id on create and on update", () => {
    const models = [model({ id: "m".repeat(700_000) })];
    for (const schema of [CreateProviderBody, UpdateProviderBody]) {
      expect(issues(schema.safeParse(makeProviderBody({ models })))).toEqual([
        "models.0.id: model must be at most 256 characters",
      ]);
    }
  });

  it("refuse rates above MAX_RATE_PER_1K (1e308, 1e12) and accept the maximum itself", () => {
    for (const rate of [1e308, 1e12, MAX_RATE_PER_1K + 0.000001]) {
      const result = CreateProviderBody.safeParse(
        makeProviderBody({ models: [model({ input_per_1k: rate })] }),
      );
      expect(issues(result)).toEqual(["models.0.input_per_1k: must be at most 100 (USD per 1000 tokens)"]);
    }
    const cacheRate = CreateProviderBody.safeParse(
      makeProviderBody({ models: [model({ cache_creation_per_1k: 1e12 })] }),
    );
    expect(issues(cacheRate)).toHaveLength(1);
    const highest = model({ input_per_1k: MAX_RATE_PER_1K, output_per_1k: MAX_RATE_PER_1K });
    expect(CreateProviderBody.parse(makeProviderBody({ models: [highest] })).models).toEqual([highest]);
  });

  it("refuse more than MAX_MODELS rows, a long URL or key, and too many or too long extra headers", () => {
    const rows = Array.from({ length: MAX_MODELS + 1 }, (_, index) => model({ id: `m${index}` }));
    expect(issues(CreateProviderBody.safeParse(makeProviderBody({ models: rows })))).toEqual([
      "models: at most 10000 models",
    ]);
    const longUrl = `https://llm.example.com/${"p".repeat(MAX_URL_LENGTH)}`;
    expect(CreateProviderBody.safeParse(makeProviderBody({ upstream_url: longUrl })).success).toBe(false);
    const longKey = "k".repeat(MAX_API_KEY_LENGTH + 1);
    expect(CreateProviderBody.safeParse(makeProviderBody({ api_key: longKey })).success).toBe(false);
    expect(
      DiscoverModelsBody.safeParse({ catalog_provider_id: "openai_api", upstream_url: longUrl, api_key: "k" })
        .success,
    ).toBe(false);
    const manyHeaders = Object.fromEntries(
      Array.from({ length: MAX_EXTRA_VALUES + 1 }, (_, i) => [`x-h${i}`, "v"]),
    );
    expect(CreateProviderBody.safeParse(makeProviderBody({ extra_values: manyHeaders })).success).toBe(false);
    expect(
      CreateProviderBody.safeParse(makeProviderBody({ extra_values: { "x-long": "v".repeat(8_193) } }))
        .success,
    ).toBe(false);
    expect(CreateProviderBody.safeParse(makeProviderBody({ name: "Open\u202EIA" })).success).toBe(false);
  });

  it("leave the reply unbounded, so a provider stored before the bounds still reads", () => {
    const stored = {
      id: "p1",
      provider_id: "custom",
      name: "n".repeat(500),
      upstream_url: "https://llm.example.com/v1",
      models: [model({ id: "m".repeat(1_000), input_per_1k: 1e12 })],
      extra_values: {},
      identity_header_user_id: "",
      identity_header_groups: "",
      enabled: true,
      skip_tls_verification: false,
      metadata_disabled: false,
      created_at: "2025-01-01T00:00:00Z",
      updated_at: "2025-01-01T00:00:00Z",
    };
    expect(Provider.safeParse(stored).success).toBe(true);
  });
});

describe("list and cap bounds", () => {
  it("bound a guardrail's allowlist: MAX_MODELS entries of bounded model names", () => {
    const body = (models: string[]) => ({
      name: "g",
      checks: {
        model_allowlist: { enabled: true, models },
        prompt_capture: { enabled: false, redact_pii: false },
      },
    });
    expect(GuardrailBody.safeParse(body(["gpt-4o"])).success).toBe(true);
    expect(issues(GuardrailBody.safeParse(body(["x".repeat(MAX_MODEL_LENGTH + 1)])))).toEqual([
      "checks.model_allowlist.models.0: model must be at most 256 characters",
    ]);
    expect(
      GuardrailBody.safeParse(body(Array.from({ length: MAX_MODELS + 1 }, (_, i) => `m${i}`))).success,
    ).toBe(false);
  });

  it("bound id lists of policies, budget rules and users to MAX_ID_LIST", () => {
    const ids = Array.from({ length: MAX_ID_LIST + 1 }, (_, index) => `id-${index}`);
    const policy = { name: "p", source_groups: ["g"], destination_provider_ids: ["p"] };
    expect(PolicyBody.safeParse(policy).success).toBe(true);
    for (const field of ["source_groups", "destination_provider_ids", "guardrail_ids"]) {
      expect(issues(PolicyBody.safeParse({ ...policy, [field]: ids }))).toEqual([
        `${field}: at most 1000 ids`,
      ]);
    }
    const rule = { name: "r", limits: makeLimits() };
    expect(BudgetRuleBody.safeParse({ ...rule, target_users: ids }).success).toBe(false);
    expect(CreateUserBody.safeParse({ email: "a@example.com", auto_groups: ids }).success).toBe(false);
  });

  it("bound USD caps to MAX_CAP_USD and windows to ten years in bodies", () => {
    expect(LimitsBody.safeParse(makeLimits({ user_cap_usd: MAX_CAP_USD })).success).toBe(true);
    expect(issues(LimitsBody.safeParse(makeLimits({ group_cap_usd: 1e10 })))).toEqual([
      "budget_limit.group_cap_usd: must be at most 5000000 USD",
    ]);
    expect(LimitsBody.safeParse(makeLimits({}, { window_seconds: MAX_WINDOW_SECONDS + 1 })).success).toBe(
      false,
    );
  });

  it("bound emails, bootstrap names, account setting text and retention days", () => {
    expect(BootstrapAccountBody.safeParse({ email: `${"a".repeat(250)}@example.com` }).success).toBe(false);
    expect(BootstrapAccountBody.safeParse({ email: "a@example.com", name: "x\u202E" }).success).toBe(false);
    const settings = {
      peer_login_expiration_enabled: false,
      peer_login_expiration: 0,
      peer_inactivity_expiration_enabled: false,
      peer_inactivity_expiration: 0,
      regular_users_view_blocked: false,
      peer_expose_enabled: false,
      peer_expose_groups: [],
    };
    expect(UpdateAccountBody.safeParse({ settings }).success).toBe(true);
    expect(
      UpdateAccountBody.safeParse({ settings: { ...settings, dns_domain: "d".repeat(300) } }).success,
    ).toBe(false);
    const settingsBody = {
      endpoint: "",
      proxy_address: "",
      enable_log_collection: true,
      enable_prompt_collection: false,
      redact_pii: false,
    };
    expect(UpdateSettingsBody.safeParse({ ...settingsBody, access_log_retention_days: -1 }).success).toBe(
      true,
    );
    expect(
      UpdateSettingsBody.safeParse({ ...settingsBody, access_log_retention_days: MAX_RETENTION_DAYS + 1 })
        .success,
    ).toBe(false);
  });
});
