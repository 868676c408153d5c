import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  AccessLogPage,
  McpServer,
  McpUserCredential,
  PersonalAccessTokenGenerated,
  User,
} from "@agentnet/contracts";
import { startTestMcpServer, type TestMcpServer } from "@agentnet/gateway-proxy/test-support/mcp-server";
import { eventually } from "@agentnet/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { scrape, total } from "../metrics";
import { type Account, clearOfHourEnd, configure, openaiClient, readUntil, userCounter } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
let upstream: TestMcpServer;
/** A server taking each user's own token: it knows only these two. */
let perUser: TestMcpServer;
const USER_TOKENS = { owner: "owner-own-token", member: "member-own-token" };
/** A server taking tokens from an OAuth token endpoint, and that endpoint. */
let minted: TestMcpServer;
let tokens: TokenEndpoint;
/** The tokens that server takes now (read at each request: a token taken out is revoked). */
const mintedTaken = ["Bearer minted-1", "Bearer minted-2"];
const CLIENT = { id: "agentnet-gateway", secret: "client-secret-5e1" };
beforeAll(async () => {
  tokens = await startTokenEndpoint(CLIENT);
  minted = await startTestMcpServer({ requiredHeader: { name: "Authorization", value: mintedTaken } });
  upstream = await startTestMcpServer({ requiredHeader: { name: "X-Api-Key", value: "issues-key" } });
  perUser = await startTestMcpServer({
    requiredHeader: { name: "X-User-Token", value: Object.values(USER_TOKENS) },
  });
  stack = await startStack({
    telemetry: true,
    metrics: true,
    proxy: {
      allowedPrivateUpstreams: [upstream.url, perUser.url, minted.url, tokens.url].map(
        (url) => new URL(url).host,
      ),
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await upstream?.stop();
  await perUser?.stop();
  await minted?.stop();
  await tokens?.stop();
});
// Counters are per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);

const HOUR = 3_600;

/** An account with the test MCP server registered through the API, at `price` USD per call. */
async function accountWithServer(price: number) {
  const account = await stack.newAccount({ enable_log_collection: true });
  const server = await account.must(
    stack.api<McpServer>("POST", "/agent-network/mcp-servers", account.token, {
      name: "issues",
      url: upstream.url,
      credential: { kind: "header", header_name: "X-Api-Key", value: "issues-key" },
      price_per_call: price,
    }),
  );
  return { account, server, setup: configure(stack, account) };
}

async function connect(token: string, path: string) {
  const client = new Client({ name: "e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.proxy.url}${path}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe("the MCP gateway, configured through the API", () => {
  it("serves a granted server's tools on /mcp/{server} and /mcp, and logs each call beside model calls", async () => {
    const { account, server, setup } = await accountWithServer(0);
    await setup.policy([account.anthropicProvider.id], {
      mcp_servers: [{ server_id: server.id, exclude_tools: ["delete_*"] }],
    });
    const single = await connect(account.token, "/mcp/issues");
    expect((await single.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      "echo",
      "get_issue",
      "summarize",
    ]);
    expect((await single.callTool({ name: "get_issue", arguments: { text: "1" } })).content).toEqual([
      { type: "text", text: "issue 1: open" },
    ]);
    await single.close();
    const joined = await connect(account.token, "/mcp");
    expect((await joined.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      "issues__echo",
      "issues__get_issue",
      "issues__summarize",
    ]);
    await expect(joined.callTool({ name: "issues__delete_issue", arguments: { text: "1" } })).rejects.toThrow(
      /Unknown tool/,
    );
    await joined.close();

    const logs = await readUntil(
      async () => (await stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)).body,
      (page) => page.total_records >= 2,
    );
    expect(logs.data.map((entry) => [entry.model, entry.decision, entry.deny_reason])).toEqual([
      ["issues__delete_issue", "deny", "mcp.tool_not_granted"],
      ["issues__get_issue", "allow", ""],
    ]);
    expect(logs.data[1]).toMatchObject({
      provider: "mcp",
      resolved_provider_id: server.id,
      tool_call: { server_id: server.id, server: "issues", tool: "get_issue" },
    });
  });

  it("counts a priced tool's calls toward the caller's USD cap: every call within it answers, the next is refused", async () => {
    const { account, server, setup } = await accountWithServer(0.25);
    await setup.policy([], {
      mcp_servers: [{ server_id: server.id }],
      limits: {
        token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: HOUR },
        budget_limit: { enabled: true, group_cap_usd: 0, user_cap_usd: 1, window_seconds: HOUR },
      },
    });
    const client = await connect(account.token, "/mcp/issues");
    const calledBefore = upstream.called.length;
    const proxyMetrics = stack.metricsUrls?.proxy ?? "";
    const before = await scrape(proxyMetrics);
    for (let call = 0; call < 4; call++) {
      const answer = await client.callTool({ name: "echo", arguments: { text: `call ${call}` } });
      expect(answer.content).toEqual([{ type: "text", text: `call ${call}` }]);
    }
    await expect(client.callTool({ name: "echo", arguments: { text: "one too many" } })).rejects.toThrow(
      /llm_policy.budget_cap_exceeded/,
    );
    expect(upstream.called.length - calledBefore).toBe(4);
    await client.close();
    const after = await scrape(proxyMetrics);
    const counted = (name: string, labels: Record<string, string>) =>
      total(after, name, labels) - total(before, name, labels);
    expect(counted("agentnet_proxy_mcp_tool_calls_total", { decision: "allow", code: "200" })).toBe(4);
    expect(counted("agentnet_proxy_mcp_tool_calls_total", { decision: "deny", code: "429" })).toBe(1);
    expect(counted("agentnet_proxy_mcp_tool_call_duration_seconds", { decision: "allow" })).toBe(4);
    expect(
      counted("agentnet_proxy_cap_refusals_total", {
        reason: "llm_policy.budget_cap_exceeded",
        stage: "admission",
      }),
    ).toBe(1);

    const events = await account.events.waitFor(5);
    expect(events.map((event) => [event.decision, event.status_code, event.cost_usd])).toEqual([
      ["allow", 200, 0.25],
      ["allow", 200, 0.25],
      ["allow", 200, 0.25],
      ["allow", 200, 0.25],
      ["deny", 429, 0],
    ]);
    expect(events[4]?.deny_reason).toBe("llm_policy.budget_cap_exceeded");
    await eventually(async () => (await userCounter(stack, account.token))?.cost_usd === 1);
  });

  it("caps a user's tool calls per window: every call within the cap answers, the next is refused, model calls never", async () => {
    const { account, server, setup } = await accountWithServer(0);
    await setup.policy([account.openaiProvider.id], {
      mcp_servers: [{ server_id: server.id }],
      limits: {
        token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: HOUR },
        budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: HOUR },
        tool_call_limit: { enabled: true, group_cap: 0, user_cap: 3, window_seconds: HOUR },
      },
    });
    const client = await connect(account.token, "/mcp");
    const calledBefore = upstream.called.length;
    for (let call = 0; call < 3; call++) {
      const answer = await client.callTool({ name: "issues__echo", arguments: { text: `call ${call}` } });
      expect(answer.content).toEqual([{ type: "text", text: `call ${call}` }]);
    }
    await expect(
      client.callTool({ name: "issues__echo", arguments: { text: "one too many" } }),
    ).rejects.toThrow(/llm_policy.tool_call_cap_exceeded/);
    expect(upstream.called.length - calledBefore).toBe(3);
    await client.close();
    // The full tool-call cap refuses no model call of the same user under the same policy.
    await openaiClient(stack, account.token).chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 10,
    });

    const events = await account.events.waitFor(5);
    expect(
      events.map((event) => [event.provider, event.decision, event.status_code, event.deny_reason]),
    ).toEqual([
      ["mcp", "allow", 200, ""],
      ["mcp", "allow", 200, ""],
      ["mcp", "allow", 200, ""],
      ["mcp", "deny", 429, "llm_policy.tool_call_cap_exceeded"],
      ["OpenAI", "allow", 200, ""],
    ]);
    // The user's counter is capped (leased), the group's only counted.
    expect(
      events[0]?.reserved_counters?.map((counter) => [counter.dimension_kind, typeof counter.lease_id]),
    ).toEqual([
      ["user", "string"],
      ["group", "undefined"],
    ]);
    await eventually(async () => (await userCounter(stack, account.token))?.tool_calls === 3);
  });

  it("calls a per-user server with each member's own credential: never another's, and none sent without one", async () => {
    const account = await stack.newAccount({ enable_log_collection: true });
    const server = await account.must(
      stack.api<McpServer>("POST", "/agent-network/mcp-servers", account.token, {
        name: "tracker",
        url: perUser.url,
        credential: { kind: "per_user", header_name: "X-User-Token" },
      }),
    );
    expect(server.credential).toEqual({ kind: "per_user", header_name: "X-User-Token" });
    await configure(stack, account).policy([], { mcp_servers: [{ server_id: server.id }] });
    const member = await newMember(account);
    const mine = `/agent-network/mcp-servers/${server.id}/my-credential`;

    // Before setting theirs, nothing reaches the server: the call is refused, with its row.
    const receivedBefore = perUser.received.length;
    const refused = await fetch(`${stack.proxy.url}/mcp/tracker`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${member.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "hi" } },
      }),
    });
    const refusal = (await refused.json()) as { error: { message: string; data: { reason: string } } };
    expect(refusal.error.data.reason).toBe("mcp.credential_missing");
    expect(refusal.error.message).toContain(`/mcp-servers/${server.id}/my-credential`);
    await expect(connect(member.token, "/mcp/tracker")).rejects.toThrow(/my-credential/);
    expect(perUser.received.length).toBe(receivedBefore);
    expect((await stack.api<McpUserCredential>("GET", mine, member.token)).body).toEqual({
      server_id: server.id,
      header_name: "X-User-Token",
      set: false,
    });

    for (const [token, value] of [
      [account.token, USER_TOKENS.owner],
      [member.token, USER_TOKENS.member],
    ] as const) {
      const set = await stack.api<McpUserCredential>("PUT", mine, token, { value });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({ server_id: server.id, set: true });
      expect(JSON.stringify(set.body)).not.toContain(value);
    }
    for (const [token, value] of [
      [account.token, USER_TOKENS.owner],
      [member.token, USER_TOKENS.member],
      [account.token, USER_TOKENS.owner],
    ] as const) {
      const from = perUser.received.length;
      const client = await connect(token, "/mcp/tracker");
      expect((await client.callTool({ name: "echo", arguments: { text: value } })).content).toEqual([
        { type: "text", text: value },
      ]);
      await client.close();
      const seen = perUser.received.slice(from).map((headers) => headers["x-user-token"]);
      expect(seen.length).toBeGreaterThan(0);
      expect(new Set(seen)).toEqual(new Set([value]));
    }
    // Also joined on /mcp, each with their own.
    const from = perUser.received.length;
    const joined = await connect(member.token, "/mcp");
    expect((await joined.callTool({ name: "tracker__echo", arguments: { text: "joined" } })).content).toEqual(
      [{ type: "text", text: "joined" }],
    );
    await joined.close();
    expect(new Set(perUser.received.slice(from).map((headers) => headers["x-user-token"]))).toEqual(
      new Set([USER_TOKENS.member]),
    );

    // Removed: refused again; a server with one shared credential takes no member's own.
    expect((await stack.api("DELETE", mine, member.token)).status).toBe(200);
    await expect(connect(member.token, "/mcp/tracker")).rejects.toThrow(/my-credential/);
    const shared = await accountWithServerIn(account);
    const notPerUser = await stack.api<{ code: number; message: string }>(
      "PUT",
      `/agent-network/mcp-servers/${shared.id}/my-credential`,
      member.token,
      { value: "x" },
    );
    expect(notPerUser.status).toBe(409);
    expect((await stack.api("PUT", mine, member.token, { value: "bad\nvalue" })).status).toBe(400);

    const logs = await readUntil(
      async () => (await stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)).body,
      (page) => page.data.some((entry) => entry.deny_reason === "mcp.credential_missing"),
    );
    expect(
      logs.data
        .filter((entry) => entry.deny_reason === "mcp.credential_missing")
        .map((entry) => [entry.user_id, entry.model, entry.status_code]),
    ).toEqual([[member.user.id, "tracker__echo", 403]]);
  });
});

describe("an MCP server taking OAuth client credentials", () => {
  it("is called with a token the gateway mints at the token endpoint, kept between calls; the secret is never shown", async () => {
    const account = await stack.newAccount({ enable_log_collection: true });
    const credential = {
      kind: "oauth_client_credentials",
      token_url: tokens.url,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      scope: "tools.read tools.call",
    };
    const server = await account.must(
      stack.api<McpServer>("POST", "/agent-network/mcp-servers", account.token, {
        name: "minted",
        url: minted.url,
        credential,
      }),
    );
    const { client_secret: _, ...shown } = credential;
    expect(server.credential).toEqual(shown);
    expect(JSON.stringify(server)).not.toContain(CLIENT.secret);
    await configure(stack, account).policy([], { mcp_servers: [{ server_id: server.id }] });

    const grantsBefore = tokens.grants.length;
    const from = minted.received.length;
    for (const text of ["one", "two"]) {
      const client = await connect(account.token, "/mcp/minted");
      expect((await client.callTool({ name: "echo", arguments: { text } })).content).toEqual([
        { type: "text", text },
      ]);
      await client.close();
    }
    // One grant for both sessions, with the client's id and secret and the scopes asked for.
    expect(tokens.grants.slice(grantsBefore)).toEqual([
      {
        client: `${CLIENT.id}:${CLIENT.secret}`,
        grant_type: "client_credentials",
        scope: "tools.read tools.call",
      },
    ]);
    expect(new Set(minted.received.slice(from).map((headers) => headers.authorization))).toEqual(
      new Set(["Bearer minted-1"]),
    );

    // The server revokes the token before it expires: its 401 drops the token, and the next request
    // goes out with a new one.
    mintedTaken.splice(mintedTaken.indexOf("Bearer minted-1"), 1);
    const initializeMinted = () =>
      fetch(`${stack.proxy.url}/mcp/minted`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${account.token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" },
          },
        }),
      }).then(async (response) => {
        await response.body?.cancel();
        return response.status;
      });
    expect(await initializeMinted()).toBe(401);
    expect(await initializeMinted()).toBe(200);
    expect(minted.received.at(-1)?.authorization).toBe("Bearer minted-2");
    expect(tokens.grants.length).toBe(grantsBefore + 2);

    // A secret the endpoint refuses: 502 naming the token endpoint's error, the secret nowhere.
    await account.must(
      stack.api("PUT", `/agent-network/mcp-servers/${server.id}`, account.token, {
        name: "minted",
        url: minted.url,
        credential: { ...credential, client_secret: "wrong-secret" },
      }),
    );
    const refused = await readUntil(
      () =>
        fetch(`${stack.proxy.url}/mcp/minted`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${account.token}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        }).then(async (response) => ({ status: response.status, text: await response.text() })),
      (answer) => answer.status === 502,
    );
    expect(refused.status).toBe(502);
    expect(refused.text).toContain("OAuth access token could not be minted");
    expect(refused.text).not.toContain("wrong-secret");
  });
});

/** A local OAuth token endpoint: client credentials grants of one client, answered with numbered tokens. */
interface TokenEndpoint {
  url: string;
  grants: { client: string; grant_type: string | null; scope: string | null }[];
  stop(): Promise<void>;
}

async function startTokenEndpoint(client: { id: string; secret: string }): Promise<TokenEndpoint> {
  const grants: TokenEndpoint["grants"] = [];
  let issued = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      const basic = (req.headers.authorization ?? "").replace(/^Basic /, "");
      const [id, secret] = Buffer.from(basic, "base64").toString("utf8").split(":").map(decodeURIComponent);
      const form = new URLSearchParams(body);
      grants.push({
        client: `${id}:${secret}`,
        grant_type: form.get("grant_type"),
        scope: form.get("scope"),
      });
      res.setHeader("content-type", "application/json");
      res.setHeader("cache-control", "no-store");
      if (id !== client.id || secret !== client.secret) {
        res.writeHead(401).end(JSON.stringify({ error: "invalid_client", error_description: "bad client" }));
        return;
      }
      issued++;
      res
        .writeHead(200)
        .end(JSON.stringify({ access_token: `minted-${issued}`, token_type: "Bearer", expires_in: 3600 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/oauth/token`,
    grants,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function newMember(account: Account) {
  const user = await account.must(
    stack.api<User>("POST", "/users", account.token, { email: `member-${Date.now()}@example.com` }),
  );
  const generated = await account.must(
    stack.api<PersonalAccessTokenGenerated>("POST", `/users/${user.id}/tokens`, account.token, {
      name: "laptop",
      expires_in: 1,
    }),
  );
  return { user, token: generated.plain_token };
}

/** The shared-credential test server registered in `account` as another server. */
const accountWithServerIn = (account: Account) =>
  account.must(
    stack.api<McpServer>("POST", "/agent-network/mcp-servers", account.token, {
      name: "issues",
      url: upstream.url,
      credential: { kind: "header", header_name: "X-Api-Key", value: "issues-key" },
    }),
  );
