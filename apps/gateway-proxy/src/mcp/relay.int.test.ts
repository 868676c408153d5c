import { McpServerGrant } from "@agentnet/contracts";
import { mcpServerCredentialAad, parseSealingKeys, seal } from "@agentnet/sealing";
import { eventually, TEST_SEALING_KEY } from "@agentnet/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeGuardrail, makeMcpServer, makePolicy, makeSettings } from "../test-support/factories";
import { startTestMcpServer, type TestMcpServer } from "../test-support/mcp-server";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { keptEvents } from "../test-support/requests";

const SERVER_KEY = "srv-key-5b1e";
const ACCOUNT = "acc_mcp_relay";
const kept = keptEvents();
let harness: ProxyHarness;
let upstream: TestMcpServer;
/** The same tools on the older HTTP+SSE transport. */
let legacy: TestMcpServer;
/** Callers of one account: `eng` is granted the server (but not delete_*), `ops` is not. */
let tokens: { eng: string; engToo: string; ops: string };

beforeAll(async () => {
  harness = await startProxyHarness("mcp-relay", { publish: kept.publish });
  upstream = await startTestMcpServer({ requiredHeader: { name: "X-Api-Key", value: SERVER_KEY } });
  legacy = await startTestMcpServer({
    requiredHeader: { name: "X-Api-Key", value: SERVER_KEY },
    transport: "sse",
  });
  const accountId = ACCOUNT;
  const serverId = "mcp_tools";
  const server = makeMcpServer({
    id: serverId,
    name: "tools",
    price_per_call: 0.002,
    url: upstream.url,
    credential: { kind: "header", header_name: "X-Api-Key" },
    sealed_credential: seal(
      parseSealingKeys(TEST_SEALING_KEY),
      SERVER_KEY,
      mcpServerCredentialAad(accountId, serverId),
    ),
  });
  const policy = makePolicy({
    id: "pol_tools",
    source_groups: ["grp_eng"],
    destination_provider_ids: [],
    mcp_servers: [McpServerGrant.parse({ server_id: serverId, exclude_tools: ["delete_*"] })],
  });
  const {
    tokens: [eng = "", engToo = "", ops = ""],
  } = harness.accountOf(
    {
      mcp_servers: [
        server,
        makeMcpServer({ id: "mcp_off", name: "off", enabled: false }),
        makeMcpServer({
          id: "mcp_legacy",
          name: "legacy",
          transport: "sse",
          url: legacy.url,
          credential: { kind: "header", header_name: "X-Api-Key" },
          sealed_credential: seal(
            parseSealingKeys(TEST_SEALING_KEY),
            SERVER_KEY,
            mcpServerCredentialAad(accountId, "mcp_legacy"),
          ),
        }),
      ],
      policies: [
        policy,
        makePolicy({
          id: "pol_legacy",
          source_groups: ["grp_eng"],
          destination_provider_ids: [],
          mcp_servers: [McpServerGrant.parse({ server_id: "mcp_legacy" })],
        }),
      ],
    },
    [{ group_ids: ["grp_eng"] }, { group_ids: ["grp_eng"] }, { group_ids: ["grp_ops"] }],
    accountId,
  );
  tokens = { eng, engToo, ops };
});
afterAll(async () => {
  await harness.stop();
  await upstream.stop();
  await legacy.stop();
});

async function connect(token: string, path = "/mcp/tools") {
  const client = new Client({ name: "relay-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: "assistant",
    model: "test-model",
    content: { type: "text", text: `model read ${request.params.messages.length} message` },
  }));
  const transport = new StreamableHTTPClientTransport(new URL(`${harness.proxy.url}${path}`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

const post = (
  token: string | undefined,
  body: string,
  headers: Record<string, string> = {},
  path = "/mcp/tools",
) =>
  fetch(`${harness.proxy.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body,
  });

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

describe("/mcp/{server} through the SDK's client", () => {
  it("lists only the granted tools and runs one with the server's credential, never the caller's token", async () => {
    const { client } = await connect(tokens.eng);
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual(["echo", "get_issue", "summarize"]);

    const echoed = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(echoed.content).toEqual([{ type: "text", text: "hi" }]);

    await expect(client.callTool({ name: "delete_issue", arguments: { text: "7" } })).rejects.toThrow(
      /Unknown tool: delete_issue: no policy grants it to you on tools/,
    );
    expect(upstream.called).not.toContain("delete_issue");
    for (const headers of upstream.received) {
      expect(headers["x-api-key"]).toBe(SERVER_KEY);
      expect(JSON.stringify(headers)).not.toContain(tokens.eng);
    }
    await client.close();
  });

  it("relays resources, prompts, and the server's own request to the client's model inside a tool call", async () => {
    const { client } = await connect(tokens.eng);
    const summary = await client.callTool({ name: "summarize", arguments: { text: "a long text" } });
    expect(summary.content).toEqual([{ type: "text", text: "summary: model read 1 message" }]);
    const resource = await client.readResource({ uri: "test://readme" });
    expect(resource.contents).toEqual([{ uri: "test://readme", text: "read me" }]);
    const prompt = await client.getPrompt({ name: "greet", arguments: { who: "Ada" } });
    expect(prompt.messages[0]?.content).toEqual({ type: "text", text: "hello Ada" });
    await client.close();
  });

  it("hands out a sealed session id that only its caller can use", async () => {
    const { client, transport } = await connect(tokens.eng);
    const sessionId = transport.sessionId ?? "";
    expect(sessionId).toMatch(/^agn1\./);
    const upstreamIds = upstream.received.map((headers) => headers["mcp-session-id"]).filter(Boolean);
    expect(upstreamIds).not.toContain(sessionId);

    const ping = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" });
    const protocol = { "mcp-protocol-version": "2025-11-25" };
    const own = await post(tokens.eng, ping, { ...protocol, "mcp-session-id": sessionId });
    expect(own.status).toBe(200);
    const stolen = await post(tokens.engToo, ping, { ...protocol, "mcp-session-id": sessionId });
    expect(stolen.status).toBe(404);
    expect(await stolen.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { message: expect.stringMatching(/session/) },
    });
    await client.close();
  });
});

describe("tool call rows", () => {
  it("publishes one row per tools/call, granted or refused, in the MCP session, and none for other methods", async () => {
    const before = kept.of(ACCOUNT).length;
    const { client, transport } = await connect(tokens.eng);
    await client.listTools();
    await client.callTool({ name: "get_issue", arguments: { text: "42" } });
    await expect(client.callTool({ name: "delete_issue", arguments: { text: "42" } })).rejects.toThrow();
    await client.close();
    await eventually(() => kept.of(ACCOUNT).length >= before + 2);
    const [granted, refused, ...more] = kept.of(ACCOUNT).slice(before);
    expect(more).toEqual([]);
    expect(granted).toMatchObject({
      provider: "mcp",
      model: "tools__get_issue",
      resolved_provider_id: "mcp_tools",
      selected_policy_id: "pol_tools",
      decision: "allow",
      deny_reason: "",
      status_code: 200,
      method: "POST",
      path: "/mcp",
      total_tokens: 0,
      cost_usd: 0.002,
      tool_call: { server_id: "mcp_tools", server: "tools", tool: "get_issue" },
    });
    expect(granted?.tool_call?.request_bytes).toBeGreaterThan(20);
    expect(granted?.tool_call?.response_bytes).toBeGreaterThan(20);
    expect(refused).toMatchObject({
      model: "tools__delete_issue",
      decision: "deny",
      deny_reason: "mcp.tool_not_granted",
      status_code: 403,
      selected_policy_id: "",
      cost_usd: 0,
      path: "/mcp/tools",
    });
    // Both in one session: the MCP session's, short and the same for every call of it.
    expect(granted?.session_id).toMatch(/^mcp-[A-Za-z0-9_-]{22}$/);
    expect(refused?.session_id).toBe(granted?.session_id);
    expect(granted?.session_id).not.toContain(transport.sessionId ?? "none");
  });

  it("puts the call in the session the client names, and captures arguments and answers only when asked", async () => {
    const before = kept.of(ACCOUNT).length;
    const client = new Client({ name: "named", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${harness.proxy.url}/mcp/tools`), {
        requestInit: { headers: { Authorization: `Bearer ${tokens.eng}`, "x-session-id": "run-77" } },
      }),
    );
    await client.callTool({ name: "echo", arguments: { text: "secret words" } });
    await client.close();
    await eventually(() => kept.of(ACCOUNT).length >= before + 1);
    const [row, ...more] = kept.of(ACCOUNT).slice(before);
    expect(more).toEqual([]);
    expect(row?.session_id).toBe("run-77");
    // The account's snapshot turns no capture on: neither text leaves the proxy.
    expect(row).not.toHaveProperty("request_prompt");
    expect(row).not.toHaveProperty("response_completion");
  });
});

describe("/mcp/{server} refusals", () => {
  it("answers 401 with where its protected-resource metadata is (RFC 9728) without a valid token", async () => {
    for (const token of [undefined, "agn_not_a_token"]) {
      const response = await post(token, initialize);
      expect(response.status).toBe(401);
      const challenge = response.headers.get("www-authenticate") ?? "";
      const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? "";
      expect(metadataUrl).toBe(`${harness.proxy.url}/.well-known/oauth-protected-resource/mcp/tools`);
      const metadata = await (await fetch(metadataUrl)).json();
      expect(metadata).toMatchObject({
        resource: `${harness.proxy.url}/mcp/tools`,
        bearer_methods_supported: ["header"],
      });
    }
  });

  it("bridges a server on the HTTP+SSE transport request by request: tools listed and called with the server's key", async () => {
    const { client } = await connect(tokens.eng, "/mcp/legacy");
    expect(client.getServerVersion()?.name).toBe("test-tools");
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual([
      "delete_issue",
      "echo",
      "get_issue",
      "summarize",
    ]);
    const calledBefore = legacy.called.length;
    expect((await client.callTool({ name: "echo", arguments: { text: "over sse" } })).content).toEqual([
      { type: "text", text: "over sse" },
    ]);
    expect(legacy.called.slice(calledBefore)).toEqual(["echo"]);
    expect(legacy.received.every((headers) => headers["x-api-key"] === SERVER_KEY)).toBe(true);
    await client.close();
    // No event stream of its own: the bridge holds no session between requests.
    const stream = await fetch(`${harness.proxy.url}/mcp/legacy`, {
      headers: { authorization: `Bearer ${tokens.eng}`, accept: "text/event-stream" },
    });
    expect(stream.status).toBe(405);
  });

  it("answers 404 for a server the account has not, 403 for one not granted or disabled", async () => {
    expect((await post(tokens.eng, initialize, {}, "/mcp/nope")).status).toBe(404);
    const ops = await post(tokens.ops, initialize);
    expect(ops.status).toBe(403);
    expect(await ops.json()).toMatchObject({
      error: { message: expect.stringContaining("no policy grants it") },
    });
    expect((await post(tokens.eng, initialize, {}, "/mcp/off")).status).toBe(403);
  });

  it("answers server/discover with 400 method-not-found, so clients fall back to initialize", async () => {
    const response = await post(
      tokens.eng,
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover" }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32601, message: expect.any(String) },
    });
  });

  it("refuses malformed JSON, batches and messages that are not JSON-RPC with a JSON-RPC error", async () => {
    const cases: [string, number][] = [
      ["{not json", -32700],
      [JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }]), -32600],
      [JSON.stringify({ jsonrpc: "1.0", id: 3, method: "ping" }), -32600],
    ];
    for (const [body, code] of cases) {
      const response = await post(tokens.eng, body);
      expect(response.status, body).toBe(400);
      expect(await response.json(), body).toMatchObject({ jsonrpc: "2.0", error: { code } });
    }
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "x".repeat(11 * 1024 * 1024) } },
    });
    expect((await post(tokens.eng, huge)).status).toBe(413);
  });
});

describe("guardrails on tool traffic", () => {
  it("hides and refuses a tool an enabled blocklist of the granting policy's guardrails names, and captures as prompts are", async () => {
    const accountId = "acc_mcp_guarded";
    const {
      tokens: [token = ""],
    } = harness.accountOf(
      {
        settings: makeSettings({ enable_log_collection: true, enable_prompt_collection: true }),
        mcp_servers: [
          makeMcpServer({
            id: "mcp_tools",
            name: "tools",
            url: upstream.url,
            credential: { kind: "header", header_name: "X-Api-Key" },
            sealed_credential: seal(
              parseSealingKeys(TEST_SEALING_KEY),
              SERVER_KEY,
              mcpServerCredentialAad(accountId, "mcp_tools"),
            ),
          }),
        ],
        guardrails: [
          makeGuardrail({
            id: "gr_tools",
            checks: {
              model_allowlist: { enabled: false, models: [] },
              prompt_capture: { enabled: true, redact_pii: true },
              tool_blocklist: { enabled: true, patterns: ["*__summ*"] },
            },
          }),
        ],
        policies: [
          makePolicy({
            id: "pol_guarded",
            source_groups: ["grp_eng"],
            destination_provider_ids: [],
            guardrail_ids: ["gr_tools"],
            mcp_servers: [McpServerGrant.parse({ server_id: "mcp_tools" })],
          }),
        ],
      },
      [{ group_ids: ["grp_eng"] }],
      accountId,
    );
    const { client } = await connect(token);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      "delete_issue",
      "echo",
      "get_issue",
    ]);
    await expect(client.callTool({ name: "summarize", arguments: { text: "t" } })).rejects.toThrow(
      /Unknown tool: summarize: a guardrail blocks it on tools/,
    );
    await client.callTool({ name: "echo", arguments: { text: "mail me at ada@example.com" } });
    await client.close();
    await eventually(() => kept.of(accountId).length >= 2);
    const [blocked, echoed] = kept.of(accountId);
    expect(blocked).toMatchObject({
      decision: "deny",
      deny_reason: "guardrail.tool_blocked",
      status_code: 403,
    });
    // The capture guardrail captures arguments and answers, redacted as prompts are.
    expect(echoed?.request_prompt).toContain("mail me at");
    expect(echoed?.request_prompt).not.toContain("ada@example.com");
    expect(echoed?.response_completion).not.toContain("ada@example.com");
  });
});
