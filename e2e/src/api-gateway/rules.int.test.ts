import type { Account, BudgetRule, Group, Guardrail } from "@agentnet/contracts";
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

const makeLimits = (overrides: { token?: object; budget?: object } = {}) => ({
  token_limit: {
    enabled: true,
    group_cap: 10_000,
    user_cap: 1_000,
    window_seconds: 3_600,
    ...overrides.token,
  },
  budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 0, ...overrides.budget },
});

describe("budget rules", () => {
  const path = "/api/agent-network/budget-rules";

  it("creates with defaults, reads, replaces and deletes (DELETE answers {})", async () => {
    const owner = await api.bootstrap();
    const created = await api.call<BudgetRule>("POST", path, {
      token: owner.token,
      body: { name: "cap", limits: makeLimits() },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: "cap",
      enabled: true,
      target_groups: [],
      target_users: [],
      limits: makeLimits(),
    });

    const listed = await api.call<BudgetRule[]>("GET", path, { token: owner.token });
    expect(listed.body.map((r) => r.id)).toEqual([created.body.id]);

    const replaced = await api.call<BudgetRule>("PUT", `${path}/${created.body.id}`, {
      token: owner.token,
      body: {
        name: "cap2",
        enabled: false,
        target_users: [owner.user_id],
        limits: makeLimits({ budget: { enabled: true, user_cap_usd: 2.5, window_seconds: 60 } }),
      },
    });
    expect(replaced.body).toMatchObject({ name: "cap2", enabled: false, target_users: [owner.user_id] });
    expect(replaced.body.limits.budget_limit).toEqual({
      enabled: true,
      group_cap_usd: 0,
      user_cap_usd: 2.5,
      window_seconds: 60,
    });

    const deleted = await api.call("DELETE", `${path}/${created.body.id}`, { token: owner.token });
    expect(deleted).toMatchObject({ status: 200, body: {} });
    expect((await api.call("GET", `${path}/${created.body.id}`, { token: owner.token })).status).toBe(404);
  });

  it("requires both limits with every member, caps >= 0, and window_seconds >= 60 when enabled", async () => {
    const owner = await api.bootstrap();
    const post = (limits: unknown) =>
      api.call("POST", path, { token: owner.token, body: { name: "x", limits } });
    expect((await post({ token_limit: makeLimits().token_limit })).status).toBe(400);
    expect((await post(makeLimits({ token: { user_cap: -1 } }))).status).toBe(400);
    const shortWindow = await post(makeLimits({ token: { window_seconds: 59 } }));
    expect(shortWindow).toMatchObject({
      status: 400,
      body: { details: [{ path: "limits.token_limit.window_seconds" }] },
    });
    expect((await post(makeLimits({ budget: { enabled: false, window_seconds: 5 } }))).status).toBe(200);
    // The spec refuses short windows only on an enabled limit, so a rule capping nothing is stored.
    const capsNothing = makeLimits({ token: { enabled: false, window_seconds: 0 } });
    expect(await post(capsNothing)).toMatchObject({ status: 200, body: { limits: capsNothing } });
    expect(
      (await api.call("POST", path, { token: owner.token, body: { limits: makeLimits() } })).status,
    ).toBe(400);
  });

  it("refuses targets that are not groups or users of the account with 422", async () => {
    const owner = await api.bootstrap();
    const other = await api.bootstrap();
    const response = await api.call("POST", path, {
      token: owner.token,
      body: { name: "x", target_users: [other.user_id], target_groups: ["nope"], limits: makeLimits() },
    });
    expect(response.status).toBe(422);
  });

  it("hides another account's rule behind 404", async () => {
    const owner = await api.bootstrap();
    const other = await api.bootstrap();
    const created = await api.call<BudgetRule>("POST", path, {
      token: owner.token,
      body: { name: "x", limits: makeLimits() },
    });
    expect((await api.call("GET", `${path}/${created.body.id}`, { token: other.token })).status).toBe(404);
    expect((await api.call("DELETE", `${path}/${created.body.id}`, { token: other.token })).status).toBe(404);
  });

  it("keeps a group that a rule targets from being deleted (409)", async () => {
    const owner = await api.bootstrap();
    const group = await api.call<Group>("POST", "/api/groups", { token: owner.token, body: { name: "eng" } });
    await api.call("POST", path, {
      token: owner.token,
      body: { name: "r", target_groups: [group.body.id], limits: makeLimits() },
    });
    expect((await api.call("DELETE", `/api/groups/${group.body.id}`, { token: owner.token })).status).toBe(
      409,
    );
  });
});

describe("guardrails", () => {
  const path = "/api/agent-network/guardrails";
  const checks = {
    model_allowlist: { enabled: true, models: ["gpt-4o"] },
    prompt_capture: { enabled: false, redact_pii: false },
  };

  it("creates, reads, replaces and deletes", async () => {
    const owner = await api.bootstrap();
    const created = await api.call<Guardrail>("POST", path, {
      token: owner.token,
      body: { name: "only 4o", checks },
    });
    expect(created.body).toMatchObject({ name: "only 4o", description: "", checks });
    const replaced = await api.call<Guardrail>("PUT", `${path}/${created.body.id}`, {
      token: owner.token,
      body: {
        name: "g",
        description: "d",
        checks: { ...checks, prompt_capture: { enabled: true, redact_pii: true } },
      },
    });
    expect(replaced.body).toMatchObject({
      description: "d",
      checks: { prompt_capture: { enabled: true, redact_pii: true } },
    });
    expect((await api.call("GET", `${path}/${created.body.id}`, { token: owner.token })).body).toEqual(
      replaced.body,
    );
    expect((await api.call("DELETE", `${path}/${created.body.id}`, { token: owner.token })).body).toEqual({});
  });

  it("requires name and both checks with every member", async () => {
    const owner = await api.bootstrap();
    expect((await api.call("POST", path, { token: owner.token, body: { checks } })).status).toBe(400);
    const partial = {
      model_allowlist: { enabled: true },
      prompt_capture: { enabled: false, redact_pii: false },
    };
    expect(
      (await api.call("POST", path, { token: owner.token, body: { name: "x", checks: partial } })).status,
    ).toBe(400);
  });
});

describe("account record", () => {
  const settings = {
    peer_login_expiration_enabled: true,
    peer_login_expiration: 3600,
    peer_inactivity_expiration_enabled: false,
    peer_inactivity_expiration: 600,
    regular_users_view_blocked: true,
    peer_expose_enabled: false,
    peer_expose_groups: [],
  };

  it("updates settings, ignores the read-only fields and keeps onboarding optional", async () => {
    const owner = await api.bootstrap();
    const response = await api.call<Account>("PUT", `/api/accounts/${owner.account_id}`, {
      token: owner.token,
      body: {
        settings: {
          ...settings,
          embedded_idp_enabled: true,
          local_auth_disabled: true,
          network_range: "100.64.0.0/10",
        },
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.settings).toMatchObject({
      peer_login_expiration: 3600,
      network_range: "100.64.0.0/10",
      embedded_idp_enabled: false,
      local_auth_disabled: false,
    });
  });

  it("refuses a missing required member (400), a bad CIDR (400) and extra without all members (400)", async () => {
    const owner = await api.bootstrap();
    const put = (body: object) =>
      api.call("PUT", `/api/accounts/${owner.account_id}`, { token: owner.token, body });
    const { peer_expose_groups: _omitted, ...missing } = settings;
    expect((await put({ settings: missing })).status).toBe(400);
    expect((await put({ settings: { ...settings, network_range: "10.0.0.0/33" } })).status).toBe(400);
    expect((await put({ settings: { ...settings, extra: { peer_approval_enabled: true } } })).status).toBe(
      400,
    );
  });

  it("requires dashboard_features.agent_network with agent_network_only (422)", async () => {
    const owner = await api.bootstrap();
    const put = (extra: object) =>
      api.call<Account>("PUT", `/api/accounts/${owner.account_id}`, {
        token: owner.token,
        body: { settings: { ...settings, ...extra } },
      });
    expect((await put({ agent_network_only: true })).status).toBe(422);
    const ok = await put({ agent_network_only: true, dashboard_features: { agent_network: true } });
    expect(ok.body.settings).toMatchObject({
      agent_network_only: true,
      dashboard_features: { agent_network: true },
    });
  });

  it("answers 404 for another account's id", async () => {
    const owner = await api.bootstrap();
    const other = await api.bootstrap();
    const response = await api.call("PUT", `/api/accounts/${other.account_id}`, {
      token: owner.token,
      body: { settings },
    });
    expect(response.status).toBe(404);
  });

  it("deletes every resource of the account and announces it", async () => {
    const owner = await api.bootstrap();
    await api.call("POST", "/api/agent-network/settings", {
      token: owner.token,
      body: { proxy_address: `${uniqueId("p").toLowerCase().replaceAll("_", "-")}.example.com` },
    });
    await api.call("POST", "/api/agent-network/budget-rules", {
      token: owner.token,
      body: { name: "r", limits: makeLimits() },
    });
    const announced = new Promise<string>((resolve) => {
      const sub = api.nc.subscribe("agn.account.deleted", {
        callback: (_e, msg) => {
          const event = msg.json<{ account_id: string }>();
          if (event.account_id === owner.account_id) {
            sub.unsubscribe();
            resolve(event.account_id);
          }
        },
      });
    });
    await api.nc.flush();
    expect(
      (await api.call("DELETE", `/api/accounts/${owner.account_id}`, { token: owner.token })).status,
    ).toBe(200);
    expect(await announced).toBe(owner.account_id);
    const again = await api.bootstrap();
    expect(
      (await api.call<BudgetRule[]>("GET", "/api/agent-network/budget-rules", { token: again.token })).body,
    ).toEqual([]);
  });
});
