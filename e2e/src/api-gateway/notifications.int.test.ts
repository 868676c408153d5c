import type {
  BudgetRule,
  NotificationDelivery,
  NotificationSettings,
  NotificationSettingsWithSecret,
} from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./harness";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness();
});
afterAll(async () => {
  await api.stop();
});

const path = "/api/agent-network/notifications";
const URL_A = "https://hooks.example.com/agentnet";

describe("notification settings", () => {
  it("are created with a signing secret shown once, read without it, replaced and removed", async () => {
    const owner = await api.bootstrap();
    expect(await api.call("GET", path, { token: owner.token })).toMatchObject({
      status: 404,
      body: { code: 404, reason: "not_found" },
    });

    const created = await api.call<NotificationSettingsWithSecret>("POST", path, {
      token: owner.token,
      body: { url: URL_A },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      url: URL_A,
      enabled: true,
      events: ["budget.threshold_crossed", "provider.credential_failed"],
      thresholds: [50, 80, 100],
      budget_rule_ids: [],
      policy_ids: [],
    });
    expect(created.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);

    const read = await api.call<NotificationSettings>("GET", path, { token: owner.token });
    const { signing_secret: _shownOnce, ...withoutSecret } = created.body;
    expect(read.body).toEqual(withoutSecret);
    expect(JSON.stringify(read.body)).not.toContain(created.body.signing_secret);

    const replaced = await api.call<NotificationSettings>("PUT", path, {
      token: owner.token,
      body: { url: "https://other.example.com/hook", thresholds: [90], events: ["budget.threshold_crossed"] },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      url: "https://other.example.com/hook",
      thresholds: [90],
      events: ["budget.threshold_crossed"],
    });
    expect(replaced.body).not.toHaveProperty("signing_secret");

    expect(await api.call("DELETE", path, { token: owner.token })).toMatchObject({ status: 200, body: {} });
    expect((await api.call("GET", path, { token: owner.token })).status).toBe(404);
    expect((await api.call("DELETE", path, { token: owner.token })).status).toBe(404);
    expect((await api.call("PUT", path, { token: owner.token, body: { url: URL_A } })).status).toBe(404);
  });

  it("are one per account: a second POST is 409", async () => {
    const owner = await api.bootstrap();
    expect((await api.call("POST", path, { token: owner.token, body: { url: URL_A } })).status).toBe(200);
    expect(await api.call("POST", path, { token: owner.token, body: { url: URL_A } })).toMatchObject({
      status: 409,
      body: { reason: "notifications.exists" },
    });
  });

  it("rotate the signing secret: the new one is answered once and differs", async () => {
    const owner = await api.bootstrap();
    expect((await api.call("POST", `${path}/secret`, { token: owner.token })).status).toBe(404);
    const created = await api.call<NotificationSettingsWithSecret>("POST", path, {
      token: owner.token,
      body: { url: URL_A },
    });
    const rotated = await api.call<NotificationSettingsWithSecret>("POST", `${path}/secret`, {
      token: owner.token,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.signing_secret).toMatch(/^whsec_/);
    expect(rotated.body.signing_secret).not.toBe(created.body.signing_secret);
    expect(rotated.body.url).toBe(URL_A);
  });

  it("refuse a malformed body with 400 naming the field, and unknown rules or policies with 422", async () => {
    const owner = await api.bootstrap();
    const post = (body: unknown) => api.call("POST", path, { token: owner.token, body });
    expect(await post({ url: "ftp://hooks.example.com" })).toMatchObject({
      status: 400,
      body: { code: 400, details: [{ path: "url" }] },
    });
    expect(await post({ url: URL_A, thresholds: [80, 120] })).toMatchObject({
      status: 400,
      body: { details: [{ path: "thresholds.1", message: "a threshold is at most 100 (%)" }] },
    });
    expect(await post({ url: URL_A, budget_rule_ids: ["nope"], policy_ids: ["nada"] })).toMatchObject({
      status: 422,
      body: {
        reason: "notifications.unknown_reference",
        details: [
          { path: "budget_rule_ids", message: "unknown budget rule nope" },
          { path: "policy_ids", message: "unknown policy nada" },
        ],
      },
    });
    const rule = await api.call<BudgetRule>("POST", "/api/agent-network/budget-rules", {
      token: owner.token,
      body: {
        name: "cap",
        limits: {
          token_limit: { enabled: true, group_cap: 0, user_cap: 1000, window_seconds: 3600 },
          budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
        },
      },
    });
    expect(await post({ url: URL_A, budget_rule_ids: [rule.body.id] })).toMatchObject({
      status: 200,
      body: { budget_rule_ids: [rule.body.id] },
    });
  });

  it("store the URL as the parser reads it, and refuse one holding whitespace or control characters", async () => {
    const owner = await api.bootstrap();
    const refusal = {
      status: 400,
      body: {
        message: "invalid request: url: must not contain whitespace or control characters (U+0009)",
        code: 400,
      },
    };
    const tabbed = { url: "https://hooks.example.com/a\tb" };
    expect(await api.call("POST", path, { token: owner.token, body: tabbed })).toMatchObject(refusal);

    const created = await api.call<NotificationSettings>("POST", path, {
      token: owner.token,
      body: { url: "HTTPS://Hooks.Example.COM:443/agentnet/../hook" },
    });
    expect(created).toMatchObject({ status: 200, body: { url: "https://hooks.example.com/hook" } });
    expect(await api.call("PUT", path, { token: owner.token, body: tabbed })).toMatchObject(refusal);
    expect((await api.call<NotificationSettings>("GET", path, { token: owner.token })).body.url).toBe(
      "https://hooks.example.com/hook",
    );
  });

  it("are read by owners, admins and auditors, changed by owners and admins only", async () => {
    const owner = await api.bootstrap();
    await api.call("POST", path, { token: owner.token, body: { url: URL_A } });
    const auditor = (await api.addMember(owner.token, "auditor")).token;
    const user = (await api.addMember(owner.token, "user")).token;
    const admin = (await api.addMember(owner.token, "admin")).token;
    expect((await api.call("GET", path, { token: auditor })).status).toBe(200);
    expect((await api.call("GET", `${path}/deliveries`, { token: auditor })).status).toBe(200);
    expect((await api.call("PUT", path, { token: auditor, body: { url: URL_A } })).status).toBe(403);
    expect((await api.call("POST", `${path}/secret`, { token: auditor })).status).toBe(403);
    expect((await api.call("GET", path, { token: user })).status).toBe(403);
    expect((await api.call("GET", `${path}/deliveries`, { token: user })).status).toBe(403);
    expect((await api.call("PUT", path, { token: admin, body: { url: URL_A } })).status).toBe(200);
  });

  it("keep a delivery log, empty before anything was sent", async () => {
    const owner = await api.bootstrap();
    const log = await api.call<NotificationDelivery[]>("GET", `${path}/deliveries`, { token: owner.token });
    expect(log).toMatchObject({ status: 200, body: [] });
  });

  it("are described in the OpenAPI document", async () => {
    const document = await api.call<{ paths: Record<string, Record<string, { operationId: string }>> }>(
      "GET",
      "/api/openapi.json",
    );
    expect(document.body.paths["/api/agent-network/notifications"]?.post?.operationId).toBe(
      "notifications.create",
    );
    expect(document.body.paths["/api/agent-network/notifications/deliveries"]?.get?.operationId).toBe(
      "notifications.deliveries",
    );
  });
});
