import type { Settings } from "@agentnet/contracts";
import { Events } from "@agentnet/contracts";
import { uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./harness";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness();
});
afterAll(async () => {
  await api.stop();
});

const path = "/api/agent-network/settings";
const uniqueHost = () => `${uniqueId("gw").toLowerCase().replaceAll("_", "-")}.example.com`;

describe("settings lifecycle", () => {
  it("GET without a record answers the defaults with empty endpoint and proxy_address", async () => {
    const owner = await api.bootstrap();
    const response = await api.call<Settings>("GET", path, { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      endpoint: "",
      proxy_address: "",
      dedicated: false,
      enable_log_collection: true,
      enable_prompt_collection: false,
      redact_pii: false,
      access_log_retention_days: 30,
    });
  });

  it("POST with proxy_address allocates a labelled endpoint under it, with the defaults", async () => {
    const owner = await api.bootstrap();
    const proxy = uniqueHost();
    const created = await api.call<Settings>("POST", path, {
      token: owner.token,
      body: { proxy_address: proxy },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      proxy_address: proxy,
      dedicated: false,
      enable_log_collection: true,
      enable_prompt_collection: false,
      redact_pii: false,
      access_log_retention_days: 30,
    });
    expect(created.body.endpoint).toMatch(new RegExp(`^agn-[0-9a-v]+\\.${proxy.replaceAll(".", "\\.")}$`));
    expect(created.body.created_at).toBeDefined();
    const read = await api.call<Settings>("GET", path, { token: owner.token });
    expect(read.body).toEqual(created.body);
  });

  it("POST with endpoint claims it verbatim as dedicated; another account cannot claim it", async () => {
    const owner = await api.bootstrap();
    const endpoint = uniqueHost();
    const created = await api.call<Settings>("POST", path, {
      token: owner.token,
      body: { endpoint, redact_pii: true },
    });
    expect(created.body).toMatchObject({ endpoint, proxy_address: "", dedicated: true, redact_pii: true });

    const other = await api.bootstrap();
    const taken = await api.call("POST", path, { token: other.token, body: { endpoint } });
    expect(taken).toMatchObject({ status: 422, body: { code: 422, details: [{ path: "endpoint" }] } });
  });

  it("refuses loopback names and another account's cluster address as a dedicated endpoint", async () => {
    const owner = await api.bootstrap();
    for (const body of [
      { endpoint: "localhost" },
      { endpoint: "gw.localhost" },
      { endpoint: "127.0.0.1" },
      { endpoint: "0.0.0.0" },
      { proxy_address: "localhost" },
    ]) {
      const refused = await api.call("POST", path, { token: owner.token, body });
      expect(refused, JSON.stringify(body)).toMatchObject({
        status: 422,
        body: { reason: "settings.loopback_hostname" },
      });
    }
    const cluster = await api.bootstrap();
    const clusterAddress = uniqueHost();
    await api.call("POST", path, { token: cluster.token, body: { proxy_address: clusterAddress } });
    for (const endpoint of [clusterAddress, `agn-mine.${clusterAddress}`]) {
      const taken = await api.call("POST", path, { token: owner.token, body: { endpoint } });
      expect(taken, endpoint).toMatchObject({ status: 422, body: { reason: "settings.endpoint_taken" } });
    }
  });

  it("refuses both or neither of proxy_address and endpoint with 422", async () => {
    const owner = await api.bootstrap();
    const both = await api.call("POST", path, {
      token: owner.token,
      body: { proxy_address: uniqueHost(), endpoint: uniqueHost() },
    });
    expect(both.status).toBe(422);
    const neither = await api.call("POST", path, {
      token: owner.token,
      body: { enable_log_collection: false },
    });
    expect(neither.status).toBe(422);
  });

  it("answers a malformed body with 400", async () => {
    const owner = await api.bootstrap();
    const bad = await api.call("POST", path, {
      token: owner.token,
      body: { endpoint: "not a host!", redact_pii: "yes" },
    });
    expect(bad).toMatchObject({ status: 400, body: { code: 400 } });
  });

  it("a second POST is 409", async () => {
    const owner = await api.bootstrap();
    await api.call("POST", path, { token: owner.token, body: { proxy_address: uniqueHost() } });
    const again = await api.call("POST", path, { token: owner.token, body: { proxy_address: uniqueHost() } });
    expect(again).toMatchObject({ status: 409, body: { code: 409 } });
  });

  it("PUT without a record is 404; with one it replaces the mutable fields", async () => {
    const owner = await api.bootstrap();
    const put = (body: object) => api.call<Settings>("PUT", path, { token: owner.token, body });
    const mutable = {
      enable_log_collection: false,
      enable_prompt_collection: true,
      redact_pii: true,
      access_log_retention_days: 0,
    };
    expect((await put({ endpoint: "x.example.com", proxy_address: "", ...mutable })).status).toBe(404);

    const created = await api.call<Settings>("POST", path, {
      token: owner.token,
      body: { proxy_address: uniqueHost() },
    });
    const updated = await put({
      endpoint: created.body.endpoint,
      proxy_address: created.body.proxy_address,
      ...mutable,
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ endpoint: created.body.endpoint, ...mutable });
  });

  it("PUT requires every field and refuses a changed endpoint or proxy_address with 422", async () => {
    const owner = await api.bootstrap();
    const created = await api.call<Settings>("POST", path, {
      token: owner.token,
      body: { proxy_address: uniqueHost() },
    });
    const mutable = {
      enable_log_collection: true,
      enable_prompt_collection: false,
      redact_pii: false,
      access_log_retention_days: 7,
    };
    const missing = await api.call("PUT", path, {
      token: owner.token,
      body: { endpoint: created.body.endpoint },
    });
    expect(missing.status).toBe(400);
    const changed = await api.call("PUT", path, {
      token: owner.token,
      body: { endpoint: uniqueHost(), proxy_address: created.body.proxy_address, ...mutable },
    });
    expect(changed).toMatchObject({ status: 422, body: { details: [{ path: "endpoint" }] } });
    const unchanged = await api.call<Settings>("GET", path, { token: owner.token });
    expect(unchanged.body.access_log_retention_days).toBe(30);
  });

  it("DELETE is 412 while a proxy actively serves the endpoint, then releases it for a new POST", async () => {
    const owner = await api.bootstrap();
    const created = await api.call<Settings>("POST", path, {
      token: owner.token,
      body: { proxy_address: uniqueHost() },
    });
    api.nc.publish(
      Events.proxyHeartbeat,
      JSON.stringify({
        v: 1,
        proxy_id: "p1",
        endpoints: [created.body.endpoint],
        at: new Date().toISOString(),
      }),
    );
    await api.nc.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await api.call("DELETE", path, { token: owner.token });
    expect(refused).toMatchObject({ status: 412, body: { code: 412 } });

    const other = await api.bootstrap();
    const dedicated = await api.call<Settings>("POST", path, {
      token: other.token,
      body: { endpoint: uniqueHost() },
    });
    expect((await api.call("DELETE", path, { token: other.token })).status).toBe(200);
    expect((await api.call<Settings>("GET", path, { token: other.token })).body.endpoint).toBe("");
    // Released, not reserved: another account may now claim it.
    const third = await api.bootstrap();
    const reclaimed = await api.call<Settings>("POST", path, {
      token: third.token,
      body: { endpoint: dedicated.body.endpoint },
    });
    expect(reclaimed.status).toBe(200);
  });

  it("DELETE without a record is 404", async () => {
    const owner = await api.bootstrap();
    expect((await api.call("DELETE", path, { token: owner.token })).status).toBe(404);
  });
});

describe("settings roles", () => {
  it("lets auditors read but not write, and users neither", async () => {
    const owner = await api.bootstrap();
    const roleToken = async (role: string) => {
      const user = await api.call<{ id: string }>("POST", "/api/users", {
        token: owner.token,
        body: { email: `${uniqueId(role)}@example.com`, role },
      });
      const token = await api.call<{ plain_token: string }>("POST", `/api/users/${user.body.id}/tokens`, {
        token: owner.token,
        body: { name: "t", expires_in: 1 },
      });
      return token.body.plain_token;
    };
    const auditor = await roleToken("auditor");
    const user = await roleToken("user");
    expect((await api.call("GET", path, { token: auditor })).status).toBe(200);
    expect(
      (await api.call("POST", path, { token: auditor, body: { proxy_address: uniqueHost() } })).status,
    ).toBe(403);
    expect((await api.call("GET", path, { token: user })).status).toBe(403);
    expect((await api.call("GET", "/api/agent-network/agent-config", { token: user })).status).toBe(200);
  });
});

describe("config change announcements", () => {
  it("publishes agn.config.changed.<account> on every configuration write", async () => {
    const owner = await api.bootstrap();
    const seen: string[] = [];
    const sub = api.nc.subscribe(`agn.config.changed.${owner.account_id}`, {
      callback: (_error, msg) => {
        seen.push(msg.json<{ account_id: string }>().account_id);
      },
    });
    await api.nc.flush();
    await api.call("POST", path, { token: owner.token, body: { proxy_address: uniqueHost() } });
    await api.call("POST", "/api/agent-network/guardrails", {
      token: owner.token,
      body: {
        name: "g",
        checks: {
          model_allowlist: { enabled: false, models: [] },
          prompt_capture: { enabled: false, redact_pii: false },
        },
      },
    });
    await api.nc.flush();
    await new Promise((resolve) => setTimeout(resolve, 100));
    sub.unsubscribe();
    expect(seen).toEqual([owner.account_id, owner.account_id]);
  });
});
