import { requestPaged } from "@agentnet/bus";
import {
  type AgentConfig,
  API_KEY_TOKEN,
  type CatalogProvider,
  ControlPlane,
  DEFAULT_ROUTING,
  type DiscoverModelsReply,
  type Group,
  type Guardrail,
  type Policy,
  type Provider,
} from "@agentnet/contracts";
import { GOOD_KEY, type Harness, startHarness } from "@agentnet/provider-verifier/test-support";
import { connectTestMongo, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./harness";

let api: ApiHarness;
let vendors: Harness;
beforeAll(async () => {
  vendors = await startHarness({ timeoutMs: 2_000 });
  api = await startApiHarness({ verifier: vendors.endpoints });
});
afterAll(async () => {
  await api.stop();
  await vendors.stop();
});

const providers = "/api/agent-network/providers";
const makeProviderBody = (overrides: Record<string, unknown> = {}) => ({
  provider_id: "openai_api",
  name: "OpenAI",
  upstream_url: vendors.upstream("ok.vendor.test"),
  api_key: GOOD_KEY,
  ...overrides,
});

async function owner() {
  const created = await api.bootstrap();
  const post = <T>(path: string, body: unknown) => api.call<T>("POST", path, { token: created.token, body });
  return { ...created, post, call: api.call };
}

describe("providers", () => {
  it("checks the credential, stores it sealed and never returns it", async () => {
    const o = await owner();
    const created = await o.post<Provider>(providers, makeProviderBody());
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      provider_id: "openai_api",
      name: "OpenAI",
      enabled: true,
      skip_tls_verification: false,
      metadata_disabled: false,
      models: [],
      extra_values: {},
      identity_header_user_id: "",
    });
    expect(JSON.stringify(created.body)).not.toContain(GOOD_KEY);
    expect(created.body).not.toHaveProperty("api_key");
    const listed = await api.call<Provider[]>("GET", providers, { token: o.token });
    expect(JSON.stringify(listed.body)).not.toContain(GOOD_KEY);

    const connection = await connectTestMongo();
    const stored = await connection.db?.collection("providers").findOne({ _id: created.body.id as never });
    await connection.close();
    expect(JSON.stringify(stored)).not.toContain(GOOD_KEY);
    expect(stored?.sealed_api_key).toMatchObject({ v: 1, kid: expect.any(String) });
  });

  it("refuses a rejected credential, an outage and an unresolvable host with 422 and writes nothing", async () => {
    const o = await owner();
    const denied = await o.post(providers, makeProviderBody({ api_key: "sk-wrong" }));
    expect(denied).toMatchObject({
      status: 422,
      body: { code: 422, reason: "provider.credential_rejected" },
    });
    expect(JSON.stringify(denied.body)).not.toContain("sk-wrong");
    const outage = await o.post(
      providers,
      makeProviderBody({ upstream_url: vendors.upstream("outage.vendor.test") }),
    );
    expect(outage).toMatchObject({ status: 422, body: { reason: "provider.vendor_outage" } });
    const nowhere = await o.post(providers, makeProviderBody({ upstream_url: "https://nowhere.invalid/v1" }));
    expect(nowhere).toMatchObject({ status: 422, body: { reason: "provider.listing_unresolvable" } });
    expect((await api.call<Provider[]>("GET", providers, { token: o.token })).body).toEqual([]);
  });

  it("stores unverifiable providers without a check: custom, and skip_tls_verification", async () => {
    const o = await owner();
    const custom = await o.post<Provider>(
      providers,
      makeProviderBody({ provider_id: "custom", upstream_url: "http://127.0.0.1:9/v1", api_key: "x" }),
    );
    expect(custom.status).toBe(200);
    const skip = await o.post<Provider>(
      providers,
      makeProviderBody({ api_key: "sk-wrong", skip_tls_verification: true }),
    );
    expect(skip).toMatchObject({ status: 200, body: { skip_tls_verification: true } });
  });

  it("requires provider_id, name, upstream_url and api_key on create (400)", async () => {
    const o = await owner();
    const { api_key: _k, ...noKey } = makeProviderBody();
    expect((await o.post(providers, noKey)).status).toBe(400);
    expect((await o.post(providers, makeProviderBody({ provider_id: "nope" }))).status).toBe(400);
    expect((await o.post(providers, makeProviderBody({ upstream_url: "no-scheme" }))).status).toBe(400);
  });

  it("re-checks on update only when upstream, key, catalog provider or TLS verification change", async () => {
    const o = await owner();
    const created = await o.post<Provider>(providers, makeProviderBody());
    const item = `${providers}/${created.body.id}`;
    const put = (body: object) =>
      api.call<Provider>("PUT", item, {
        token: o.token,
        body: { ...makeProviderBody(), api_key: undefined, ...body },
      });

    // A rename with price rows and extra values: no check, the stored key is kept.
    const renamed = await put({
      name: "Renamed",
      models: [{ id: "gpt-4o", input_per_1k: 0.0025, output_per_1k: 0.01, cached_input_per_1k: 0 }],
      extra_values: { "OpenAI-Organization": "org-1", "OpenAI-Project": "" },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Renamed", extra_values: { "OpenAI-Organization": "org-1" } });
    expect(renamed.body.models[0]).toEqual({
      id: "gpt-4o",
      input_per_1k: 0.0025,
      output_per_1k: 0.01,
      cached_input_per_1k: 0,
    });

    // A new key that the vendor rejects: 422, and the record is unchanged.
    const rejected = await put({ api_key: "sk-wrong", name: "Should not stick" });
    expect(rejected).toMatchObject({ status: 422, body: { reason: "provider.credential_rejected" } });
    expect((await api.call<Provider>("GET", item, { token: o.token })).body.name).toBe("Renamed");

    // A changed upstream is checked with the stored key (omitted api_key): the outage refuses it.
    const moved = await put({ upstream_url: vendors.upstream("outage.vendor.test") });
    expect(moved.status).toBe(422);

    // Turning skip_tls on stores without a check; turning it back off checks again.
    expect(
      (await put({ skip_tls_verification: true, upstream_url: vendors.upstream("outage.vendor.test") }))
        .status,
    ).toBe(200);
    expect(
      (await put({ skip_tls_verification: false, upstream_url: vendors.upstream("outage.vendor.test") }))
        .status,
    ).toBe(422);
    expect((await put({ skip_tls_verification: false })).status).toBe(200);
  });

  it("refuses deleting a provider a policy uses (409, naming the policy), then deletes it", async () => {
    const o = await owner();
    const provider = await o.post<Provider>(providers, makeProviderBody());
    const all = (await api.call<Group[]>("GET", "/api/groups", { token: o.token })).body[0];
    const policy = await o.post<Policy>("/api/agent-network/policies", {
      name: "everyone",
      source_groups: [all?.id],
      destination_provider_ids: [provider.body.id],
    });
    const refused = await api.call("DELETE", `${providers}/${provider.body.id}`, { token: o.token });
    expect(refused).toMatchObject({ status: 409, body: { message: expect.stringContaining("everyone") } });
    await api.call("DELETE", `/api/agent-network/policies/${policy.body.id}`, { token: o.token });
    expect((await api.call("DELETE", `${providers}/${provider.body.id}`, { token: o.token })).status).toBe(
      200,
    );
  });

  it("keeps settings while a provider exists (412)", async () => {
    const o = await owner();
    await o.post("/api/agent-network/settings", {
      endpoint: `${uniqueId("e").toLowerCase().replaceAll("_", "-")}.example.com`,
    });
    await o.post(providers, makeProviderBody());
    expect((await api.call("DELETE", "/api/agent-network/settings", { token: o.token })).status).toBe(412);
  });
});

describe("policies", () => {
  it("creates with defaults and refuses references outside the account (422)", async () => {
    const o = await owner();
    const provider = await o.post<Provider>(providers, makeProviderBody());
    const group = await o.post<Group>("/api/groups", { name: "eng" });
    const created = await o.post<Policy>("/api/agent-network/policies", {
      name: "eng to openai",
      source_groups: [group.body.id],
      destination_provider_ids: [provider.body.id],
    });
    expect(created.body).toMatchObject({
      enabled: true,
      description: "",
      guardrail_ids: [],
      mcp_servers: [],
    });
    expect(created.body).not.toHaveProperty("limits");

    const other = await owner();
    const foreign = await other.post<Policy>("/api/agent-network/policies", {
      name: "x",
      source_groups: [group.body.id],
      destination_provider_ids: [provider.body.id],
      guardrail_ids: ["missing"],
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body).toMatchObject({
      details: expect.arrayContaining([expect.objectContaining({ path: "guardrail_ids" })]),
    });
    expect((await o.post("/api/agent-network/policies", { name: "x", source_groups: [] })).status).toBe(400);
  });

  it("replaces a policy and clears limits a PUT leaves out", async () => {
    const o = await owner();
    const provider = await o.post<Provider>(providers, makeProviderBody());
    const group = await o.post<Group>("/api/groups", { name: "eng" });
    const limits = {
      token_limit: { enabled: true, group_cap: 0, user_cap: 100, window_seconds: 60 },
      budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 0 },
    };
    const body = { name: "p", source_groups: [group.body.id], destination_provider_ids: [provider.body.id] };
    const created = await o.post<Policy>("/api/agent-network/policies", { ...body, limits });
    expect(created.body.limits).toEqual(limits);
    const replaced = await api.call<Policy>("PUT", `/api/agent-network/policies/${created.body.id}`, {
      token: o.token,
      body: { ...body, enabled: false },
    });
    expect(replaced.body).toMatchObject({ enabled: false });
    expect(replaced.body).not.toHaveProperty("limits");
  });

  it("stores routing with its defaults filled, answers it and hands it to the proxy; without it, none", async () => {
    const o = await owner();
    const first = await o.post<Provider>(providers, makeProviderBody({ name: "first" }));
    const second = await o.post<Provider>(providers, makeProviderBody({ name: "second" }));
    const group = await o.post<Group>("/api/groups", { name: "eng" });
    const body = {
      name: "balanced",
      source_groups: [group.body.id],
      destination_provider_ids: [first.body.id, second.body.id],
    };
    const plain = await o.post<Policy>("/api/agent-network/policies", { ...body, name: "plain" });
    expect(plain.status).toBe(200);
    expect(plain.body).not.toHaveProperty("routing");

    const weights = { [first.body.id]: 3, [second.body.id]: 1 };
    const weighted = await o.post<Policy>("/api/agent-network/policies", {
      ...body,
      routing: { strategy: "weighted", weights },
    });
    expect(weighted.status).toBe(200);
    const routing = { ...DEFAULT_ROUTING, strategy: "weighted", weights };
    expect(weighted.body.routing).toEqual(routing);
    const read = await api.call<Policy>("GET", `/api/agent-network/policies/${weighted.body.id}`, {
      token: o.token,
    });
    expect(read.body.routing).toEqual(routing);

    const snapshot = await requestPaged(api.nc, ControlPlane.gatewaySnapshot, { account_id: o.account_id });
    const byName = new Map(snapshot.policies.map((policy) => [policy.name, policy]));
    expect(byName.get("balanced")?.routing).toEqual(routing);
    expect(byName.get("plain")).not.toHaveProperty("routing");

    const path = `/api/agent-network/policies/${weighted.body.id}`;
    const noRetries = await api.call<Policy>("PUT", path, {
      token: o.token,
      body: { ...body, routing: { retries_enabled: false } },
    });
    expect(noRetries.body.routing).toEqual({ ...DEFAULT_ROUTING, retries_enabled: false });
    const cleared = await api.call<Policy>("PUT", path, { token: o.token, body });
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty("routing");
  });

  it("refuses a weight for a provider the policy does not grant, and routing out of bounds (400)", async () => {
    const o = await owner();
    const granted = await o.post<Provider>(providers, makeProviderBody({ name: "granted" }));
    const other = await o.post<Provider>(providers, makeProviderBody({ name: "other" }));
    const group = await o.post<Group>("/api/groups", { name: "eng" });
    const body = { name: "p", source_groups: [group.body.id], destination_provider_ids: [granted.body.id] };
    const stray = { strategy: "weighted", weights: { [granted.body.id]: 1, [other.body.id]: 2 } };

    const refused = await o.post("/api/agent-network/policies", { ...body, routing: stray });
    expect(refused).toMatchObject({
      status: 400,
      body: {
        code: 400,
        reason: "policy.routing_weight_not_destination",
        message: expect.stringContaining(other.body.id),
        details: [expect.objectContaining({ path: `routing.weights.${other.body.id}` })],
      },
    });
    const created = await o.post<Policy>("/api/agent-network/policies", body);
    const replaced = await api.call("PUT", `/api/agent-network/policies/${created.body.id}`, {
      token: o.token,
      body: { ...body, routing: stray },
    });
    expect(replaced).toMatchObject({
      status: 400,
      body: { reason: "policy.routing_weight_not_destination" },
    });

    for (const routing of [{ max_attempts: 0 }, { budget_ms: 10 }, { strategy: "random" }]) {
      expect(
        (await o.post("/api/agent-network/policies", { ...body, routing })).status,
        JSON.stringify(routing),
      ).toBe(400);
    }
    const unchanged = await api.call<Policy>("GET", `/api/agent-network/policies/${created.body.id}`, {
      token: o.token,
    });
    expect(unchanged.body).not.toHaveProperty("routing");
  });
});

describe("agent-config", () => {
  it("shows a member only what their groups reach, with allowlists, and no secrets", async () => {
    const o = await owner();
    const none = await api.call<AgentConfig>("GET", "/api/agent-network/agent-config", { token: o.token });
    expect(none.body).toEqual({ configured: false, endpoint: "", providers: [], mcp_servers: [] });

    const endpoint = `${uniqueId("e").toLowerCase().replaceAll("_", "-")}.example.com`;
    await o.post("/api/agent-network/settings", { endpoint });
    const openai = await o.post<Provider>(providers, makeProviderBody({ name: "OpenAI" }));
    const hidden = await o.post<Provider>(providers, makeProviderBody({ name: "Hidden" }));
    const eng = await o.post<Group>("/api/groups", { name: "eng" });
    const ops = await o.post<Group>("/api/groups", { name: "ops" });
    const guard = await o.post<Guardrail>("/api/agent-network/guardrails", {
      name: "small models",
      checks: {
        model_allowlist: { enabled: true, models: ["gpt-4o-mini"] },
        prompt_capture: { enabled: false, redact_pii: false },
      },
    });
    await o.post("/api/agent-network/policies", {
      name: "eng",
      source_groups: [eng.body.id],
      destination_provider_ids: [openai.body.id],
      guardrail_ids: [guard.body.id],
    });
    await o.post("/api/agent-network/policies", {
      name: "ops",
      source_groups: [ops.body.id],
      destination_provider_ids: [hidden.body.id],
    });

    const member = await o.post<{ id: string }>("/api/users", {
      email: `${uniqueId("m")}@example.com`,
      auto_groups: [eng.body.id],
    });
    const token = await o.post<{ plain_token: string }>(`/api/users/${member.body.id}/tokens`, {
      name: "t",
      expires_in: 1,
    });
    const config = await api.call<AgentConfig>("GET", "/api/agent-network/agent-config", {
      token: token.body.plain_token,
    });
    expect(config.body).toEqual({
      configured: true,
      endpoint,
      providers: [
        {
          name: "OpenAI",
          catalog_id: "openai_api",
          api_flavor: "openai",
          all_models_allowed: false,
          models: ["gpt-4o-mini"],
        },
      ],
      mcp_servers: [],
    });
    expect(JSON.stringify(config.body)).not.toContain(GOOD_KEY);

    // The owner is in no policy's group: configured, but nothing reachable.
    const ownerView = await api.call<AgentConfig>("GET", "/api/agent-network/agent-config", {
      token: o.token,
    });
    expect(ownerView.body).toMatchObject({ configured: true, providers: [] });
  });

  it("lists every model as allowed with catalog models as a courtesy when nothing restricts", async () => {
    const o = await owner();
    await o.post("/api/agent-network/settings", {
      endpoint: `${uniqueId("e").toLowerCase().replaceAll("_", "-")}.example.com`,
    });
    const provider = await o.post<Provider>(providers, makeProviderBody());
    const all = (await api.call<Group[]>("GET", "/api/groups", { token: o.token })).body[0];
    await o.post("/api/agent-network/policies", {
      name: "all",
      source_groups: [all?.id],
      destination_provider_ids: [provider.body.id],
    });
    const config = await api.call<AgentConfig>("GET", "/api/agent-network/agent-config", { token: o.token });
    expect(config.body.providers[0]).toMatchObject({
      all_models_allowed: true,
      models: expect.arrayContaining(["gpt-4o"]),
    });
  });
});

describe("catalog and model discovery", () => {
  it("lists the static catalog with the seven API styles and custom", async () => {
    const o = await owner();
    const catalog = await api.call<CatalogProvider[]>("GET", "/api/agent-network/catalog/providers", {
      token: o.token,
    });
    expect(catalog.body.map((c) => c.id).sort()).toEqual(
      [
        "anthropic_api",
        "azure_api",
        "bedrock_api",
        "cloudflare_api",
        "custom",
        "gemini_api",
        "mistral_api",
        "openai_api",
        "vertex_api",
      ].sort(),
    );
    for (const entry of catalog.body) expect(entry.auth_header_template).toContain(API_KEY_TOKEN);
    // Where each entry's prices come from and when they were checked (docs/API.md "Catalog prices").
    expect(catalog.body.find((c) => c.id === "openai_api")).toMatchObject({
      prices_checked_on: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      prices_source: expect.stringMatching(/^https:\/\//),
    });
  });

  it("discovers models with an unsaved key or a stored provider, with pricing_known", async () => {
    const o = await owner();
    const path = "/api/agent-network/catalog/providers/models";
    const unsaved = await o.post<DiscoverModelsReply>(path, {
      catalog_provider_id: "openai_api",
      upstream_url: vendors.upstream("ok.vendor.test"),
      api_key: GOOD_KEY,
    });
    expect(unsaved.status).toBe(200);
    expect(unsaved.body.models.find((m) => m.id === "gpt-4o")).toMatchObject({ pricing_known: true });
    expect(unsaved.body.models.some((m) => !m.pricing_known)).toBe(true);

    const provider = await o.post<Provider>(providers, makeProviderBody());
    const stored = await o.post<DiscoverModelsReply>(path, {
      catalog_provider_id: "openai_api",
      provider_id: provider.body.id,
    });
    expect(stored.body.models.length).toBe(unsaved.body.models.length);
  });

  it("answers 422 for an entry without a listing and 400 for a body breaking the either-or rule", async () => {
    const o = await owner();
    const path = "/api/agent-network/catalog/providers/models";
    const custom = await o.post(path, {
      catalog_provider_id: "custom",
      upstream_url: "https://x.example.com",
      api_key: "k",
    });
    expect(custom).toMatchObject({ status: 422, body: { reason: "catalog.no_listing_endpoint" } });
    expect((await o.post(path, { catalog_provider_id: "openai_api", api_key: "k" })).status).toBe(400);
    expect(
      (
        await o.post(path, {
          catalog_provider_id: "openai_api",
          api_key: "k",
          provider_id: "p",
          upstream_url: "https://x.example.com",
        })
      ).status,
    ).toBe(400);
  });
});
