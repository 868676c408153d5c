import { request, requestPaged } from "@agentnet/bus";
import {
  type AgentConfig,
  ControlPlane,
  type Group,
  type McpServer,
  type McpUserCredential,
  type Policy,
} from "@agentnet/contracts";
import { GOOD_KEY, type Harness, startHarness } from "@agentnet/provider-verifier/test-support";
import { mcpServerCredentialAad, mcpUserCredentialAad, parseSealingKeys, unseal } from "@agentnet/sealing";
import { TEST_SEALING_KEY } from "@agentnet/testkit";
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

const servers = "/api/agent-network/mcp-servers";
const policies = "/api/agent-network/policies";
const SECRET = "Bearer mcp-secret-7f3a";

const makeServerBody = (overrides: Record<string, unknown> = {}) => ({
  name: "issues",
  url: "http://mcp.example.com/mcp",
  credential: { kind: "header", header_name: "Authorization", value: SECRET },
  ...overrides,
});

async function owner() {
  const created = await api.bootstrap();
  const call = <T>(method: string, path: string, body?: unknown) =>
    api.call<T>(method, path, { token: created.token, ...(body === undefined ? {} : { body }) });
  const post = <T>(path: string, body: unknown) => call<T>("POST", path, body);
  return { ...created, call, post };
}

async function member(ownerToken: string, role: "admin" | "auditor" | "user") {
  return (await api.addMember(ownerToken, role)).token;
}

async function memberWithId(ownerToken: string, role: "admin" | "auditor" | "user") {
  const { user, token } = await api.addMember(ownerToken, role);
  return { id: user.id, token };
}

describe("MCP servers", () => {
  it("creates with defaults, stores the credential sealed and never returns it", async () => {
    const o = await owner();
    const created = await o.post<McpServer>(servers, makeServerBody());
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: "issues",
      description: "",
      url: "http://mcp.example.com/mcp",
      transport: "streamable_http",
      credential: { kind: "header", header_name: "Authorization" },
      enabled: true,
      skip_tls_verification: false,
      price_per_call: 0,
    });
    expect(JSON.stringify(created.body)).not.toContain("mcp-secret");

    const listed = await o.call<McpServer[]>("GET", servers);
    expect(listed.body).toEqual([created.body]);
    expect((await o.call<McpServer>("GET", `${servers}/${created.body.id}`)).body).toEqual(created.body);

    // Only the proxy's view carries the value, sealed to this server of this account.
    const snapshot = await requestPaged(api.nc, ControlPlane.gatewaySnapshot, { account_id: o.account_id });
    const [held] = snapshot.mcp_servers;
    expect(held?.sealed_credential).toBeDefined();
    const keys = parseSealingKeys(TEST_SEALING_KEY);
    if (!held?.sealed_credential) throw new Error("no sealed credential");
    expect(unseal(keys, held.sealed_credential, mcpServerCredentialAad(o.account_id, held.id))).toBe(SECRET);
    expect(() =>
      unseal(keys, held.sealed_credential as never, mcpServerCredentialAad("other", held.id)),
    ).toThrow();
  });

  it("refuses bad fields with 400 and the field named", async () => {
    const o = await owner();
    const refused = async (overrides: Record<string, unknown>, path: string) => {
      const response = await o.post(servers, makeServerBody(overrides));
      expect(response.status, JSON.stringify(overrides)).toBe(400);
      expect(response.body).toMatchObject({
        code: 400,
        details: expect.arrayContaining([expect.objectContaining({ path })]),
      });
    };
    await refused({ name: "Issues" }, "name");
    await refused({ name: "my__issues" }, "name");
    await refused({ name: "issues-" }, "name");
    await refused({ name: "a".repeat(33) }, "name");
    await refused({ url: "ftp://mcp.example.com" }, "url");
    await refused({ transport: "websocket" }, "transport");
    await refused({ credential: { kind: "header", header_name: "Authorization" } }, "credential.value");
    await refused(
      { credential: { kind: "header", header_name: "X-Key", value: "a\r\nX-Evil: 1" } },
      "credential.value",
    );
    await refused(
      { credential: { kind: "header", header_name: "bad header", value: "v" } },
      "credential.header_name",
    );
    await refused({ credential: { kind: "oauth" } }, "credential.kind");
    await refused({ price_per_call: -0.01 }, "price_per_call");
    await refused({ price_per_call: 101 }, "price_per_call");
    expect((await o.call<McpServer[]>("GET", servers)).body).toEqual([]);
  });

  it("keeps names unique in an account (409), not across accounts", async () => {
    const o = await owner();
    expect((await o.post(servers, makeServerBody())).status).toBe(200);
    const again = await o.post(servers, makeServerBody({ url: "http://other.example.com/mcp" }));
    expect(again).toMatchObject({
      status: 409,
      body: { code: 409, message: expect.stringContaining("issues") },
    });

    const docs = await o.post<McpServer>(servers, makeServerBody({ name: "docs" }));
    const renamed = await o.call("PUT", `${servers}/${docs.body.id}`, makeServerBody());
    expect(renamed.status).toBe(409);

    const other = await owner();
    expect((await other.post(servers, makeServerBody())).status).toBe(200);
  });

  it("keeps what a PUT leaves out, replaces a credential sent whole and drops it for none", async () => {
    const o = await owner();
    const created = await o.post<McpServer>(
      servers,
      makeServerBody({ price_per_call: 0.002, enabled: false }),
    );
    const path = `${servers}/${created.body.id}`;
    const sealedValue = async () => {
      const snapshot = await requestPaged(api.nc, ControlPlane.gatewaySnapshot, {
        account_id: o.account_id,
        fresh: true,
      });
      const held = snapshot.mcp_servers[0];
      return held?.sealed_credential
        ? unseal(
            parseSealingKeys(TEST_SEALING_KEY),
            held.sealed_credential,
            mcpServerCredentialAad(o.account_id, held.id),
          )
        : undefined;
    };

    const renamed = await o.call<McpServer>("PUT", path, {
      name: "tracker",
      url: "http://mcp.example.com/v2",
    });
    expect(renamed.body).toMatchObject({
      name: "tracker",
      url: "http://mcp.example.com/v2",
      enabled: false,
      price_per_call: 0.002,
      credential: { kind: "header", header_name: "Authorization" },
    });
    expect(await sealedValue()).toBe(SECRET);

    const rekeyed = await o.call<McpServer>("PUT", path, {
      name: "tracker",
      url: "http://mcp.example.com/v2",
      credential: { kind: "header", header_name: "X-Api-Key", value: "k2" },
    });
    expect(rekeyed.body.credential).toEqual({ kind: "header", header_name: "X-Api-Key" });
    expect(await sealedValue()).toBe("k2");

    const open = await o.call<McpServer>("PUT", path, {
      name: "tracker",
      url: "http://mcp.example.com/v2",
      credential: { kind: "none" },
    });
    expect(open.body.credential).toEqual({ kind: "none" });
    expect(await sealedValue()).toBeUndefined();
  });

  it("keeps each member's own credential of a per-user server write-only, sealed to them, and drops it with them", async () => {
    const o = await owner();
    const created = await o.post<McpServer>(
      servers,
      makeServerBody({ name: "tracker", credential: { kind: "per_user", header_name: "X-User-Token" } }),
    );
    expect(created.body.credential).toEqual({ kind: "per_user", header_name: "X-User-Token" });
    const server = created.body.id;
    const mine = `${servers}/${server}/my-credential`;
    const user = await memberWithId(o.token, "user");
    const auditor = await memberWithId(o.token, "auditor");
    const own = (who: { token: string }, method: string, body?: unknown) =>
      api.call<McpUserCredential>(method, mine, {
        token: who.token,
        ...(body === undefined ? {} : { body }),
      });
    expect((await own(user, "GET")).body).toEqual({
      server_id: server,
      header_name: "X-User-Token",
      set: false,
    });
    for (const who of [user, auditor]) {
      const set = await own(who, "PUT", { value: `token-of-${who.id}` });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({ server_id: server, set: true, updated_at: expect.any(String) });
      expect(JSON.stringify(set.body)).not.toContain("token-of");
    }
    const keys = parseSealingKeys(TEST_SEALING_KEY);
    const sealedOf = async (userId: string) =>
      (
        await request(api.nc, ControlPlane.mcpUserCredentialOf, {
          account_id: o.account_id,
          server_id: server,
          user_id: userId,
        })
      ).sealed;
    const sealed = await sealedOf(user.id);
    if (!sealed) throw new Error("not stored");
    expect(unseal(keys, sealed, mcpUserCredentialAad(o.account_id, server, user.id))).toBe(
      `token-of-${user.id}`,
    );
    expect(() => unseal(keys, sealed, mcpUserCredentialAad(o.account_id, server, auditor.id))).toThrow();

    expect((await own(user, "PUT", { value: "" })).status).toBe(400);
    expect((await own(user, "PUT", { value: "a\r\nX-Injected: 1" })).status).toBe(400);
    const other = await owner();
    expect((await other.call("PUT", mine, { value: "x" })).status).toBe(404);
    const shared = await o.post<McpServer>(servers, makeServerBody({ name: "shared" }));
    const refused = await api.call<{ code: number; message: string }>(
      "PUT",
      `${servers}/${shared.body.id}/my-credential`,
      {
        token: user.token,
        body: { value: "x" },
      },
    );
    expect(refused.status).toBe(409);

    // Gone with the member; and every member's once the server takes one shared credential.
    expect((await o.call("DELETE", `/api/users/${user.id}`)).status).toBe(200);
    expect(await sealedOf(user.id)).toBeUndefined();
    expect(await sealedOf(auditor.id)).toBeDefined();
    // Members' own values never follow the server to another origin.
    const perUserBody = { name: "tracker", credential: { kind: "per_user", header_name: "X-User-Token" } };
    await o.call(
      "PUT",
      `${servers}/${server}`,
      makeServerBody({ ...perUserBody, url: "http://other.example.com/mcp" }),
    );
    expect(await sealedOf(auditor.id)).toBeUndefined();
    await own(auditor, "PUT", { value: "again" });
    await o.call(
      "PUT",
      `${servers}/${server}`,
      makeServerBody({ ...perUserBody, url: "http://other.example.com/v2" }),
    );
    expect(await sealedOf(auditor.id)).toBeDefined();
    await o.call("PUT", `${servers}/${server}`, makeServerBody({ name: "tracker" }));
    expect(await sealedOf(auditor.id)).toBeUndefined();
    expect((await own(auditor, "GET")).status).toBe(409);
  });

  it("stores an OAuth client's secret sealed, shows the rest, and refuses a malformed client (400)", async () => {
    const o = await owner();
    const credential = {
      kind: "oauth_client_credentials",
      token_url: "https://auth.example.com/oauth/token",
      client_id: "gateway",
      client_secret: "oauth-secret-91",
      scope: "tools.read",
    };
    const created = await o.post<McpServer>(servers, makeServerBody({ name: "minted", credential }));
    expect(created.status).toBe(200);
    const { client_secret: _, ...shown } = credential;
    expect(created.body.credential).toEqual(shown);
    expect(JSON.stringify(created.body)).not.toContain("oauth-secret");
    const snapshot = await requestPaged(api.nc, ControlPlane.gatewaySnapshot, { account_id: o.account_id });
    const held = snapshot.mcp_servers.find((server) => server.id === created.body.id);
    if (!held?.sealed_credential) throw new Error("no sealed secret");
    const keys = parseSealingKeys(TEST_SEALING_KEY);
    expect(unseal(keys, held.sealed_credential, mcpServerCredentialAad(o.account_id, held.id))).toBe(
      "oauth-secret-91",
    );
    for (const [field, value] of [
      ["scope", "tools.read  tools.call"],
      ["client_id", ""],
      ["client_secret", ""],
      ["token_url", "ftp://auth.example.com/token"],
    ] as const) {
      const refused = await o.post<{ details: { path: string }[] }>(
        servers,
        makeServerBody({ name: "bad", credential: { ...credential, [field]: value } }),
      );
      expect(refused.status, field).toBe(400);
      expect(refused.body.details.map((detail) => detail.path)).toContain(`credential.${field}`);
    }
    // Back to a plain header: nothing of the OAuth client is kept.
    const header = await o.call<McpServer>(
      "PUT",
      `${servers}/${created.body.id}`,
      makeServerBody({ name: "minted" }),
    );
    expect(header.body.credential).toEqual({ kind: "header", header_name: "Authorization" });
  });

  it("hides another account's server behind 404, and lets auditors read but only owners and admins write", async () => {
    const o = await owner();
    const created = await o.post<McpServer>(servers, makeServerBody());
    const other = await owner();
    for (const [method, body] of [["GET"], ["PUT", makeServerBody()], ["DELETE"]] as const) {
      const response = await other.call(method, `${servers}/${created.body.id}`, body);
      expect(response.status, method).toBe(404);
    }

    const auditor = await member(o.token, "auditor");
    expect((await api.call("GET", servers, { token: auditor })).status).toBe(200);
    expect(
      (await api.call("POST", servers, { token: auditor, body: makeServerBody({ name: "x" }) })).status,
    ).toBe(403);
    const user = await member(o.token, "user");
    expect((await api.call("GET", servers, { token: user })).status).toBe(403);
    const admin = await member(o.token, "admin");
    expect(
      (await api.call("POST", servers, { token: admin, body: makeServerBody({ name: "x" }) })).status,
    ).toBe(200);
  });
});

describe("checking an MCP server on create and update", () => {
  it("initializes it and lists its tools over HTTPS with its credential before storing it", async () => {
    const o = await owner();
    const verified = await o.post<McpServer>(
      servers,
      makeServerBody({
        url: vendors.upstream("mcp.vendor.test", "/mcp"),
        credential: { kind: "header", header_name: "X-Api-Key", value: GOOD_KEY },
      }),
    );
    expect(verified.status).toBe(200);
    const path = `${servers}/${verified.body.id}`;

    // A URL that moves is checked again, with the stored credential; refused, nothing changes.
    const moved = await o.call("PUT", path, {
      name: "issues",
      url: vendors.upstream("outage.vendor.test", "/mcp"),
    });
    expect(moved).toMatchObject({ status: 422, body: { code: 422, reason: "mcp_server.outage" } });
    expect((await o.call<McpServer>("GET", path)).body.url).toBe(verified.body.url);
    // A rename alone is not checked.
    expect((await o.call("PUT", path, { name: "tracker", url: verified.body.url })).status).toBe(200);
  });

  it("refuses a server that rejects its credential (422), storing nothing, and never echoes the credential", async () => {
    const o = await owner();
    const refused = await o.post(
      servers,
      makeServerBody({
        url: vendors.upstream("mcp.vendor.test", "/mcp"),
        credential: { kind: "header", header_name: "X-Api-Key", value: "wrong-key-1234" },
      }),
    );
    expect(refused).toMatchObject({ status: 422, body: { reason: "mcp_server.credential_rejected" } });
    expect(JSON.stringify(refused.body)).not.toContain("wrong-key-1234");
    expect((await o.call<McpServer[]>("GET", servers)).body).toEqual([]);
  });
});

describe("policies granting MCP servers", () => {
  async function setUp() {
    const o = await owner();
    const server = await o.post<McpServer>(servers, makeServerBody());
    const group = await o.post<Group>("/api/groups", { name: "eng" });
    return { o, server: server.body, group: group.body };
  }

  it("grants servers with tool filters, defaults the filters to every tool, and needs no provider", async () => {
    const { o, server, group } = await setUp();
    const created = await o.post<Policy>(policies, {
      name: "eng tools",
      source_groups: [group.id],
      destination_provider_ids: [],
      mcp_servers: [{ server_id: server.id, exclude_tools: ["delete_*"] }],
    });
    expect(created.status).toBe(200);
    expect(created.body.mcp_servers).toEqual([
      { server_id: server.id, include_tools: [], exclude_tools: ["delete_*"] },
    ]);

    const snapshot = await requestPaged(api.nc, ControlPlane.gatewaySnapshot, { account_id: o.account_id });
    expect(snapshot.policies[0]?.mcp_servers).toEqual(created.body.mcp_servers);

    const replaced = await o.call<Policy>("PUT", `${policies}/${created.body.id}`, {
      name: "eng tools",
      source_groups: [group.id],
      destination_provider_ids: [],
      mcp_servers: [{ server_id: server.id, include_tools: ["get_*", "search"] }],
    });
    expect(replaced.body.mcp_servers).toEqual([
      { server_id: server.id, include_tools: ["get_*", "search"], exclude_tools: [] },
    ]);
  });

  it("shows each member, in the agent config, the servers granted to them and where the proxy serves them", async () => {
    const o = await owner();
    await o.call("POST", "/api/agent-network/settings", { proxy_address: "gw.example.com" });
    const server = await o.post<McpServer>(servers, makeServerBody({ description: "the tracker" }));
    await o.post<McpServer>(servers, makeServerBody({ name: "legacy", transport: "sse" }));
    await o.post<McpServer>(servers, makeServerBody({ name: "ungranted" }));
    const groups = await o.call<Group[]>("GET", "/api/groups");
    const all = groups.body.find((group) => group.name === "All");
    const legacy = (await o.call<McpServer[]>("GET", servers)).body.find((s) => s.name === "legacy");
    await o.post(policies, {
      name: "everyone",
      source_groups: [all?.id],
      destination_provider_ids: [],
      mcp_servers: [{ server_id: server.body.id }, { server_id: legacy?.id }],
    });
    const config = await o.call<AgentConfig>("GET", "/api/agent-network/agent-config");
    // The HTTP+SSE server is offered like any other: the proxy bridges it.
    expect(config.body.mcp_servers).toEqual([
      { id: server.body.id, name: "issues", description: "the tracker", path: "/mcp/issues" },
      { id: legacy?.id, name: "legacy", description: "", path: "/mcp/legacy" },
    ]);
    expect(JSON.stringify(config.body)).not.toContain("mcp-secret");
  });

  it("refuses a policy with no destination at all, a server granted twice and bad patterns (400)", async () => {
    const { o, server, group } = await setUp();
    const refused = async (body: Record<string, unknown>, path: string) => {
      const response = await o.post(policies, { name: "p", source_groups: [group.id], ...body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toMatchObject({
        details: expect.arrayContaining([expect.objectContaining({ path })]),
      });
    };
    await refused({ destination_provider_ids: [] }, "destination_provider_ids");
    await refused({ mcp_servers: [{ server_id: server.id }] }, "destination_provider_ids");
    await refused(
      { destination_provider_ids: [], mcp_servers: [{ server_id: server.id }, { server_id: server.id }] },
      "mcp_servers.1.server_id",
    );
    await refused(
      { destination_provider_ids: [], mcp_servers: [{ server_id: server.id, include_tools: ["get issue"] }] },
      "mcp_servers.0.include_tools.0",
    );
    await refused(
      { destination_provider_ids: [], mcp_servers: [{ server_id: server.id, exclude_tools: [""] }] },
      "mcp_servers.0.exclude_tools.0",
    );
  });

  it("refuses a server of another account (422) and deleting a granted server (409)", async () => {
    const { o, server, group } = await setUp();
    const other = await owner();
    const foreign = await other.post<McpServer>(servers, makeServerBody());
    const refused = await o.post(policies, {
      name: "p",
      source_groups: [group.id],
      destination_provider_ids: [],
      mcp_servers: [{ server_id: foreign.body.id }],
    });
    expect(refused).toMatchObject({
      status: 422,
      body: {
        code: 422,
        details: [{ path: "mcp_servers", message: expect.stringContaining(foreign.body.id) }],
      },
    });

    const granting = await o.post<Policy>(policies, {
      name: "granting",
      source_groups: [group.id],
      destination_provider_ids: [],
      mcp_servers: [{ server_id: server.id }],
    });
    const inUse = await o.call("DELETE", `${servers}/${server.id}`);
    expect(inUse).toMatchObject({
      status: 409,
      body: { code: 409, message: expect.stringContaining("granting") },
    });
    await o.call("DELETE", `${policies}/${granting.body.id}`);
    expect((await o.call("DELETE", `${servers}/${server.id}`)).body).toEqual({});
    expect((await o.call("GET", `${servers}/${server.id}`)).status).toBe(404);
  });
});
