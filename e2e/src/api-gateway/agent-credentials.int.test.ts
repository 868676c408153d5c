import type {
  AgentCredential,
  AgentTokens,
  AuditPage,
  DeviceAuthorization,
  DevicePreview,
  User,
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

const startDevice = async () =>
  (await api.call<DeviceAuthorization>("POST", "/api/auth/device/code", { body: { client_name: "laptop" } }))
    .body;

const poll = (deviceCode: string) =>
  api.call<AgentTokens & { error?: string }>("POST", "/api/auth/device/token", {
    body: { device_code: deviceCode },
  });

const refresh = (refreshToken: string) =>
  api.call<AgentTokens & { error?: string }>("POST", "/api/auth/token", {
    body: { refresh_token: refreshToken },
  });

/** A member's agent credential, as `agentnet login` gets it: device code, approval, tokens. */
async function signInAgent(memberToken: string): Promise<AgentTokens> {
  const device = await startDevice();
  await api.call("POST", "/api/agent-credentials/device", {
    token: memberToken,
    body: { user_code: device.user_code },
  });
  const tokens = await poll(device.device_code);
  expect(tokens.status).toBe(200);
  return tokens.body;
}

describe("agent credentials", () => {
  it("are given by a device code the member approves: pending, slowed, then a short-lived proxy token and a refresh token", async () => {
    const owner = await api.bootstrap();
    const member = await api.addMember(owner.token);
    const device = await startDevice();
    expect(device).toMatchObject({ expires_in: 600, interval: 5 });
    expect(device.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(device.verification_uri).toBe(`${api.baseUrl}/#/device`);
    expect(device.verification_uri_complete).toBe(`${api.baseUrl}/#/device?user_code=${device.user_code}`);

    expect(await poll(device.device_code)).toMatchObject({
      status: 400,
      body: { error: "authorization_pending" },
    });
    expect(await poll(device.device_code)).toMatchObject({ status: 400, body: { error: "slow_down" } });

    // Before approving, the member sees who asked: the client, its address and agent, and when.
    const preview = (userCode: string) =>
      api.call<DevicePreview>("GET", `/api/agent-credentials/device?user_code=${userCode}`, {
        token: member.token,
      });
    const asked = await preview(device.user_code.replace("-", "").toLowerCase());
    expect(asked).toMatchObject({
      status: 200,
      body: { user_code: device.user_code, client_name: "laptop", address: "127.0.0.1", user_agent: "node" },
    });
    expect(Date.parse(asked.body.expires_at) - Date.parse(asked.body.requested_at)).toBe(600_000);
    expect((await preview("BCDF-GHJK")).status).toBe(404);

    // Typed as a person would: lower case, no dash.
    const approved = await api.call("POST", "/api/agent-credentials/device", {
      token: member.token,
      body: { user_code: device.user_code.replace("-", "").toLowerCase() },
    });
    expect(approved).toMatchObject({ status: 200, body: { approved: true, client_name: "laptop" } });

    const tokens = await poll(device.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: "Bearer", expires_in: 900 });
    expect(tokens.body.access_token).toMatch(/^agn_[0-9A-Za-z]{40}$/);
    expect(tokens.body.refresh_token).toMatch(/^agr_[0-9A-Za-z]{40}$/);
    // The code is spent.
    expect((await poll(device.device_code)).body.error).toBe("invalid_grant");
    expect((await preview(device.user_code)).status).toBe(404);

    // The proxy token acts as the member.
    const me = await api.call<User[]>("GET", "/api/users", { token: tokens.body.access_token });
    expect(me.body.map((user) => user.id)).toEqual([member.user.id]);

    // A proxy token mints nothing that would outlive it.
    const other = await startDevice();
    const byProxyToken = { token: tokens.body.access_token };
    expect(
      (
        await api.call("POST", "/api/agent-credentials/device", {
          ...byProxyToken,
          body: { user_code: other.user_code },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await api.call("POST", `/api/users/${member.user.id}/tokens`, {
          ...byProxyToken,
          body: { name: "escape", expires_in: 365 },
        })
      ).status,
    ).toBe(403);

    const listed = await api.call<AgentCredential[]>("GET", "/api/agent-credentials", {
      token: member.token,
    });
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0]).toMatchObject({ user_id: member.user.id, client_name: "laptop" });

    const trail = await api.call<AuditPage>("GET", "/api/audit?action=agent_credentials", {
      token: owner.token,
    });
    expect(trail.body.entries.map((entry) => [entry.action, entry.outcome, entry.actor.user_id])).toEqual([
      ["agent_credentials.approve", "refused", member.user.id],
      ["agent_credentials.create", "succeeded", member.user.id],
      ["agent_credentials.approve", "succeeded", member.user.id],
    ]);
  });

  it("refreshes once per refresh token; one used twice was copied, and the whole credential is revoked", async () => {
    const owner = await api.bootstrap();
    const member = await api.addMember(owner.token);
    const first = await signInAgent(member.token);

    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.access_token).not.toBe(first.access_token);
    expect((await api.call("GET", "/api/users", { token: second.body.access_token })).status).toBe(200);

    expect(await refresh(first.refresh_token)).toMatchObject({
      status: 401,
      body: { error: "invalid_grant" },
    });
    const trail = await api.call<AuditPage>("GET", "/api/audit?target_type=agent_credential", {
      token: owner.token,
    });
    expect(trail.body.entries[0]).toMatchObject({
      action: "agent_credentials.revoke_copied",
      actor: { user_id: member.user.id },
    });
    expect((await refresh(second.body.refresh_token)).status).toBe(401);
    expect((await api.call("GET", "/api/users", { token: second.body.access_token })).status).toBe(401);
    expect(
      (await api.call<AgentCredential[]>("GET", "/api/agent-credentials", { token: member.token })).body,
    ).toEqual([]);
  });

  it("stop working when the member is blocked, and when the member revokes them", async () => {
    const owner = await api.bootstrap();
    const member = await api.addMember(owner.token);
    const revokedByMember = await signInAgent(member.token);
    const untilBlocked = await signInAgent(member.token);

    const [credential] = (
      await api.call<AgentCredential[]>("GET", "/api/agent-credentials", { token: member.token })
    ).body;
    expect(
      (await api.call("DELETE", `/api/agent-credentials/${credential?.id}`, { token: member.token })).status,
    ).toBe(200);
    expect((await refresh(revokedByMember.refresh_token)).status).toBe(401);
    const refreshed = await refresh(untilBlocked.refresh_token);
    expect(refreshed.status).toBe(200);

    await api.call("PUT", `/api/users/${member.user.id}`, {
      token: owner.token,
      body: { role: "user", auto_groups: [], is_blocked: true },
    });
    expect((await refresh(refreshed.body.refresh_token)).status).toBe(401);
    expect((await api.call("GET", "/api/users", { token: refreshed.body.access_token })).status).toBe(401);
  });

  it("refuses a refused, unknown or expired code, and malformed bodies, in OAuth's words", async () => {
    const owner = await api.bootstrap();
    const member = await api.addMember(owner.token);
    const device = await startDevice();
    await api.call("POST", "/api/agent-credentials/device", {
      token: member.token,
      body: { user_code: device.user_code, approve: false },
    });
    expect((await poll(device.device_code)).body.error).toBe("access_denied");
    expect(
      (
        await api.call("POST", "/api/agent-credentials/device", {
          token: member.token,
          body: { user_code: "BBBB-BBBB" },
        })
      ).status,
    ).toBe(404);
    expect((await poll("not-a-code")).body.error).toBe("invalid_grant");
    expect(await api.call("POST", "/api/auth/device/token", { body: {} })).toMatchObject({
      status: 400,
      body: { error: "invalid_request", code: 400 },
    });
    expect(
      (await api.call("POST", "/api/agent-credentials/device", { body: { user_code: "x" } })).status,
    ).toBe(401);
  });
});
