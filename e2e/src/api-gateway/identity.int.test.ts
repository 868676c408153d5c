import type { Account, Group, PersonalAccessTokenGenerated, User } from "@agentnet/contracts";
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

/** A member of the owner's account with the given role, and a token of theirs. */

describe("authentication", () => {
  it("answers 401 without a token, with a malformed one and with an unknown one", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer x" },
      { authorization: "Token agn_doesnotexist" },
    ];
    for (const headers of attempts) {
      const response = await api.call("GET", "/api/accounts", { headers });
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ code: 401, message: expect.any(String) });
    }
  });

  it("answers 401 for a revoked token", async () => {
    const owner = await api.bootstrap();
    const { user, token } = await api.addMember(owner.token, "user");
    const tokens = await api.call<{ id: string }[]>("GET", `/api/users/${user.id}/tokens`, { token });
    const [only] = tokens.body;
    expect(only).toBeDefined();
    expect((await api.call("DELETE", `/api/users/${user.id}/tokens/${only?.id}`, { token })).status).toBe(
      200,
    );
    expect((await api.call("GET", "/api/accounts", { token })).status).toBe(401);
  });
});

describe("GET /api/accounts", () => {
  it("returns exactly the caller's account with its defaults", async () => {
    const owner = await api.bootstrap("founder@acme.example");
    const response = await api.call<Account[]>("GET", "/api/accounts", { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(1);
    expect(response.body[0]).toMatchObject({
      id: owner.account_id,
      domain: "acme.example",
      created_by: owner.user_id,
      settings: {
        peer_login_expiration_enabled: true,
        regular_users_view_blocked: true,
        peer_expose_groups: [],
      },
      onboarding: { signup_form_pending: false, onboarding_flow_pending: true },
    });
  });
});

describe("content negotiation and malformed input", () => {
  it("refuses a non-JSON body with 415, bad JSON with 400 and a non-JSON Accept with 406", async () => {
    const owner = await api.bootstrap();
    const textBody = await api.call("POST", "/api/groups", {
      token: owner.token,
      body: "name=x",
      headers: { "content-type": "text/plain" },
    });
    expect(textBody.status).toBe(415);
    const badJson = await api.call("POST", "/api/groups", { token: owner.token, body: "{nope" });
    expect(badJson).toMatchObject({ status: 400, body: { code: 400 } });
    const xml = await api.call("GET", "/api/accounts", {
      token: owner.token,
      headers: { accept: "application/xml" },
    });
    expect(xml.status).toBe(406);
  });

  it("answers 400 with field details for a body that breaks the contract", async () => {
    const owner = await api.bootstrap();
    const response = await api.call("POST", "/api/users", {
      token: owner.token,
      body: { email: "not-an-email", role: "king" },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: 400,
      details: expect.arrayContaining([
        expect.objectContaining({ path: "email" }),
        expect.objectContaining({ path: "role" }),
      ]),
    });
  });

  it("answers unknown routes with a JSON 404", async () => {
    const owner = await api.bootstrap();
    const response = await api.call("GET", "/api/nowhere", { token: owner.token });
    expect(response).toMatchObject({ status: 404, body: { code: 404 } });
  });
});

describe("users", () => {
  it("creates, reads, updates and deletes a user; a duplicate email is 409", async () => {
    const owner = await api.bootstrap();
    const email = `${uniqueId("u")}@example.com`;
    const created = await api.call<User>("POST", "/api/users", {
      token: owner.token,
      body: { email, name: "Ada" },
    });
    expect(created).toMatchObject({
      status: 200,
      body: { email, name: "Ada", role: "user", status: "active", auto_groups: [] },
    });
    const duplicate = await api.call("POST", "/api/users", { token: owner.token, body: { email } });
    expect(duplicate.status).toBe(409);

    const group = await api.call<Group>("POST", "/api/groups", { token: owner.token, body: { name: "eng" } });
    const updated = await api.call<User>("PUT", `/api/users/${created.body.id}`, {
      token: owner.token,
      body: { role: "auditor", auto_groups: [group.body.id] },
    });
    expect(updated.body).toMatchObject({ role: "auditor", auto_groups: [group.body.id] });
    const fetched = await api.call<User>("GET", `/api/users/${created.body.id}`, { token: owner.token });
    expect(fetched.body.role).toBe("auditor");

    expect((await api.call("DELETE", `/api/users/${created.body.id}`, { token: owner.token })).body).toEqual(
      {},
    );
    expect((await api.call("GET", `/api/users/${created.body.id}`, { token: owner.token })).status).toBe(404);
  });

  it("refuses a group of another account with 422", async () => {
    const owner = await api.bootstrap();
    const other = await api.bootstrap();
    const foreign = await api.call<Group>("POST", "/api/groups", { token: other.token, body: { name: "x" } });
    const response = await api.call("POST", "/api/users", {
      token: owner.token,
      body: { email: `${uniqueId("u")}@example.com`, auto_groups: [foreign.body.id] },
    });
    expect(response.status).toBe(422);
  });

  it("keeps the last owner: demoting or deleting them is refused", async () => {
    const owner = await api.bootstrap();
    const demote = await api.call("PUT", `/api/users/${owner.user_id}`, {
      token: owner.token,
      body: { role: "admin", auto_groups: [] },
    });
    expect(demote.status).toBe(409);
  });

  it("lets a regular user see only themself, and a user of another account not at all", async () => {
    const owner = await api.bootstrap();
    const member = await api.addMember(owner.token, "user");
    const list = await api.call<User[]>("GET", "/api/users", { token: member.token });
    expect(list.body.map((u) => u.id)).toEqual([member.user.id]);
    expect(list.body[0]?.is_current).toBe(true);
    expect((await api.call("GET", `/api/users/${owner.user_id}`, { token: member.token })).status).toBe(404);

    const stranger = await api.bootstrap();
    expect((await api.call("GET", `/api/users/${owner.user_id}`, { token: stranger.token })).status).toBe(
      404,
    );
  });
});

describe("roles", () => {
  it("lets admins write but not grant owner; auditors read but not write; users neither", async () => {
    const owner = await api.bootstrap();
    const admin = await api.addMember(owner.token, "admin");
    const auditor = await api.addMember(owner.token, "auditor");
    const user = await api.addMember(owner.token, "user");

    expect((await api.call("POST", "/api/groups", { token: admin.token, body: { name: "a" } })).status).toBe(
      200,
    );
    const grantOwner = await api.call("POST", "/api/users", {
      token: admin.token,
      body: { email: `${uniqueId("o")}@example.com`, role: "owner" },
    });
    expect(grantOwner.status).toBe(403);

    expect((await api.call("GET", "/api/groups", { token: auditor.token })).status).toBe(200);
    expect(
      (await api.call("POST", "/api/groups", { token: auditor.token, body: { name: "b" } })).status,
    ).toBe(403);

    const forbidden = await api.call("GET", "/api/groups", { token: user.token });
    expect(forbidden).toMatchObject({ status: 403, body: { code: 403 } });
  });

  it("lets only owners delete the account", async () => {
    const owner = await api.bootstrap();
    const admin = await api.addMember(owner.token, "admin");
    expect(
      (await api.call("DELETE", `/api/accounts/${owner.account_id}`, { token: admin.token })).status,
    ).toBe(403);
    expect(
      (await api.call("DELETE", `/api/accounts/${owner.account_id}`, { token: owner.token })).status,
    ).toBe(200);
    expect((await api.call("GET", "/api/accounts", { token: owner.token })).status).toBe(401);
  });
});

describe("groups", () => {
  it("starts with the All group counting every user; names are unique; All cannot be deleted", async () => {
    const owner = await api.bootstrap();
    await api.addMember(owner.token, "user");
    const groups = await api.call<Group[]>("GET", "/api/groups", { token: owner.token });
    expect(groups.body).toEqual([expect.objectContaining({ name: "All", users_count: 2 })]);
    const all = groups.body[0];

    expect(
      (await api.call("POST", "/api/groups", { token: owner.token, body: { name: "All" } })).status,
    ).toBe(409);
    expect((await api.call("DELETE", `/api/groups/${all?.id}`, { token: owner.token })).status).toBe(422);
  });

  it("removes a deleted group from its members", async () => {
    const owner = await api.bootstrap();
    const group = await api.call<Group>("POST", "/api/groups", { token: owner.token, body: { name: "eng" } });
    const member = await api.call<User>("POST", "/api/users", {
      token: owner.token,
      body: { email: `${uniqueId("u")}@example.com`, auto_groups: [group.body.id] },
    });
    expect((await api.call("DELETE", `/api/groups/${group.body.id}`, { token: owner.token })).status).toBe(
      200,
    );
    const after = await api.call<User>("GET", `/api/users/${member.body.id}`, { token: owner.token });
    expect(after.body.auto_groups).toEqual([]);
  });
});

describe("tokens", () => {
  it("shows the secret once, lists tokens without it, and lets an admin not act for an owner", async () => {
    const owner = await api.bootstrap();
    const created = await api.call<PersonalAccessTokenGenerated>(
      "POST",
      `/api/users/${owner.user_id}/tokens`,
      {
        token: owner.token,
        body: { name: "ci", expires_in: 7 },
      },
    );
    expect(created.body.plain_token).toMatch(/^agn_[0-9A-Za-z]{40}$/);
    const list = await api.call<object[]>("GET", `/api/users/${owner.user_id}/tokens`, {
      token: owner.token,
    });
    expect(JSON.stringify(list.body)).not.toContain(created.body.plain_token);
    expect(list.body).toHaveLength(2);

    const admin = await api.addMember(owner.token, "admin");
    const forOwner = await api.call("POST", `/api/users/${owner.user_id}/tokens`, {
      token: admin.token,
      body: { name: "x", expires_in: 1 },
    });
    expect(forOwner.status).toBe(403);
    expect(
      (
        await api.call("POST", `/api/users/${owner.user_id}/tokens`, {
          token: owner.token,
          body: { name: "x", expires_in: 400 },
        })
      ).status,
    ).toBe(400);
  });
});
