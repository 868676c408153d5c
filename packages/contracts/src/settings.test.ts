import { describe, expect, it } from "vitest";
import {
  CreateSettingsBody,
  endpointChoiceError,
  Hostname,
  Settings,
  UpdateSettingsBody,
  unconfiguredSettings,
} from "./settings";

const issuePaths = (result: { error?: { issues: { path: PropertyKey[] }[] } }) =>
  (result.error?.issues ?? []).map((issue) => issue.path.join("."));

const makeSettings = (overrides: Partial<Settings> = {}): Settings => ({
  endpoint: "acme.gw.example.com",
  proxy_address: "gw.example.com",
  dedicated: false,
  enable_log_collection: true,
  enable_prompt_collection: false,
  redact_pii: false,
  access_log_retention_days: 30,
  created_at: "2025-01-01T00:00:00Z",
  updated_at: "2025-01-02T00:00:00+02:00",
  ...overrides,
});

const makeUpdateBody = (overrides: Partial<UpdateSettingsBody> = {}): UpdateSettingsBody => ({
  endpoint: "acme.gw.example.com",
  proxy_address: "gw.example.com",
  enable_log_collection: true,
  enable_prompt_collection: true,
  redact_pii: true,
  access_log_retention_days: 7,
  ...overrides,
});

describe("Hostname", () => {
  it.each(["gw.example.com", "localhost", "a-b.c0.io", `${"a".repeat(63)}.com`])("accepts %s", (host) => {
    expect(Hostname.safeParse(host).success).toBe(true);
  });

  it("lowercases and trims", () => {
    expect(Hostname.parse("  GW.Example.COM ")).toBe("gw.example.com");
  });

  it.each([
    ["empty", ""],
    ["blank", "   "],
    ["leading hyphen", "-gw.example.com"],
    ["trailing hyphen label", "gw-.example.com"],
    ["underscore", "gw_1.example.com"],
    ["empty label", "gw..example.com"],
    ["trailing dot", "gw.example.com."],
    ["scheme", "https://gw.example.com"],
    ["port", "gw.example.com:443"],
    ["label over 63", `${"a".repeat(64)}.com`],
    ["over 253 chars", Array.from({ length: 64 }, () => "abc").join(".")],
  ])("rejects %s", (_why, host) => {
    expect(Hostname.safeParse(host).success).toBe(false);
  });
});

describe("Settings", () => {
  it("parses a stored record", () => {
    expect(Settings.parse(makeSettings())).toEqual(makeSettings());
  });

  it("parses the no-record defaults, which have no timestamps", () => {
    const defaults = unconfiguredSettings();
    expect(Settings.parse(defaults)).toEqual({
      endpoint: "",
      proxy_address: "",
      dedicated: false,
      enable_log_collection: true,
      enable_prompt_collection: false,
      redact_pii: false,
      access_log_retention_days: 30,
    });
  });

  it("accepts a retention of 0 or less (keep indefinitely)", () => {
    expect(Settings.safeParse(makeSettings({ access_log_retention_days: -1 })).success).toBe(true);
  });

  it("rejects a fractional retention", () => {
    expect(issuePaths(Settings.safeParse(makeSettings({ access_log_retention_days: 1.5 })))).toEqual([
      "access_log_retention_days",
    ]);
  });

  it("rejects a timestamp without an offset", () => {
    expect(issuePaths(Settings.safeParse(makeSettings({ created_at: "2025-01-01T00:00:00" })))).toEqual([
      "created_at",
    ]);
  });
});

describe("CreateSettingsBody", () => {
  it("applies the defaults", () => {
    expect(CreateSettingsBody.parse({ proxy_address: "gw.example.com" })).toEqual({
      proxy_address: "gw.example.com",
      enable_log_collection: true,
      enable_prompt_collection: false,
      redact_pii: false,
      access_log_retention_days: 30,
    });
  });

  it("keeps explicit values", () => {
    const body = CreateSettingsBody.parse({
      endpoint: "AI.Acme.com",
      enable_log_collection: false,
      enable_prompt_collection: true,
      redact_pii: true,
      access_log_retention_days: 0,
    });
    expect(body).toMatchObject({
      endpoint: "ai.acme.com",
      enable_log_collection: false,
      access_log_retention_days: 0,
    });
  });

  it("treats an empty endpoint as not given", () => {
    const body = CreateSettingsBody.parse({ proxy_address: "gw.example.com", endpoint: "" });
    expect(body.endpoint).toBeUndefined();
    expect(endpointChoiceError(body)).toBeNull();
  });

  it.each(["endpoint", "proxy_address"] as const)("rejects an invalid %s hostname", (field) => {
    expect(issuePaths(CreateSettingsBody.safeParse({ [field]: "not a host" }))).toEqual([field]);
  });

  it("rejects a non-integer retention", () => {
    expect(
      issuePaths(CreateSettingsBody.safeParse({ endpoint: "a.com", access_log_retention_days: "30" })),
    ).toEqual(["access_log_retention_days"]);
  });

  it("strips read-only fields", () => {
    const body = CreateSettingsBody.parse({ endpoint: "a.com", dedicated: true, created_at: "x" });
    expect(body).not.toHaveProperty("dedicated");
    expect(body).not.toHaveProperty("created_at");
  });

  it("parses both or neither endpoint source (the domain refuses them with 422)", () => {
    expect(CreateSettingsBody.safeParse({}).success).toBe(true);
    expect(CreateSettingsBody.safeParse({ endpoint: "a.com", proxy_address: "b.com" }).success).toBe(true);
  });
});

describe("endpointChoiceError", () => {
  it("accepts exactly one of proxy_address or endpoint", () => {
    expect(endpointChoiceError(CreateSettingsBody.parse({ proxy_address: "gw.example.com" }))).toBeNull();
    expect(endpointChoiceError(CreateSettingsBody.parse({ endpoint: "ai.acme.com" }))).toBeNull();
  });

  it("refuses both", () => {
    const body = CreateSettingsBody.parse({ proxy_address: "gw.example.com", endpoint: "ai.acme.com" });
    expect(endpointChoiceError(body)).toMatch(/mutually exclusive/);
  });

  it("refuses neither", () => {
    expect(endpointChoiceError(CreateSettingsBody.parse({ endpoint: "", proxy_address: "  " }))).toMatch(
      /exactly one/,
    );
  });
});

describe("UpdateSettingsBody", () => {
  it("parses a complete body and lowercases the hostnames", () => {
    const body = UpdateSettingsBody.parse(makeUpdateBody({ endpoint: "ACME.gw.example.com" }));
    expect(body.endpoint).toBe("acme.gw.example.com");
  });

  it("accepts the empty proxy_address of a dedicated endpoint", () => {
    expect(UpdateSettingsBody.safeParse(makeUpdateBody({ proxy_address: "" })).success).toBe(true);
  });

  it.each([
    "endpoint",
    "proxy_address",
    "enable_log_collection",
    "enable_prompt_collection",
    "redact_pii",
    "access_log_retention_days",
  ] as const)("requires %s", (field) => {
    const { [field]: _dropped, ...rest } = makeUpdateBody();
    expect(issuePaths(UpdateSettingsBody.safeParse(rest))).toEqual([field]);
  });

  it("rejects an invalid endpoint hostname", () => {
    expect(issuePaths(UpdateSettingsBody.safeParse(makeUpdateBody({ endpoint: "bad_host" })))).toEqual([
      "endpoint",
    ]);
  });
});
