import { McpServerGrant } from "@agentnet/contracts";
import { mcpServerCredentialAad, parseSealingKeys, seal } from "@agentnet/sealing";
import { eventually, TEST_SEALING_KEY } from "@agentnet/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeMcpServer, makePolicy } from "../test-support/factories";
import { startTestMcpServer, type TestMcpServer } from "../test-support/mcp-server";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { keptEvents } from "../test-support/requests";

const ACCOUNT = "acc_mcp_union";
const kept = keptEvents();
let harness: ProxyHarness;
let tools: TestMcpServer;
let docs: TestMcpServer;
/** `eng` is granted both servers (tools without delete_*, docs only echo); `ops` only docs. */
let tokens: { eng: string; ops: string };

beforeAll(async () => {
  harness = await startProxyHarness("mcp-union", { publish: kept.publish });
  tools = await startTestMcpServer({ requiredHeader: { name: "Authorization", value: "Bearer tools-key" } });
  docs = await startTestMcpServer();
  const sealed = seal(
    parseSealingKeys(TEST_SEALING_KEY),
    "Bearer tools-key",
    mcpServerCredentialAad(ACCOUNT, "mcp_tools"),
  );
  const grant = (server_id: string, filters: Partial<McpServerGrant> = {}) =>
    McpServerGrant.parse({ server_id, ...filters });
  const {
    tokens: [eng = "", ops = ""],
  } = harness.accountOf(
    {
      mcp_servers: [
        makeMcpServer({
          id: "mcp_tools",
          name: "tools",
          url: tools.url,
          credential: { kind: "header", header_name: "Authorization" },
          sealed_credential: sealed,
        }),
        makeMcpServer({ id: "mcp_docs", name: "docs", url: docs.url }),
        makeMcpServer({ id: "mcp_unreachable", name: "gone", url: "http://127.0.0.1:9/mcp" }),
      ],
      policies: [
        makePolicy({
          id: "pol_eng",
          source_groups: ["grp_eng"],
          destination_provider_ids: [],
          mcp_servers: [
            grant("mcp_tools", { exclude_tools: ["delete_*"] }),
            grant("mcp_docs", { include_tools: ["echo"] }),
            grant("mcp_unreachable"),
          ],
        }),
        makePolicy({
          id: "pol_ops",
          source_groups: ["grp_ops"],
          destination_provider_ids: [],
          mcp_servers: [grant("mcp_docs")],
        }),
      ],
    },
    [{ group_ids: ["grp_eng"] }, { group_ids: ["grp_ops"] }],
    ACCOUNT,
  );
  tokens = { eng, ops };
});
afterAll(async () => {
  await harness.stop();
  await tools.stop();
  await docs.stop();
});

async function connect(token: string) {
  const client = new Client({ name: "union-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: "assistant",
    model: "test-model",
    content: { type: "text", text: "a short summary" },
  }));
  const transport = new StreamableHTTPClientTransport(new URL(`${harness.proxy.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

describe("/mcp: the servers granted to the caller, joined", () => {
  it("lists each server's granted tools as {server}__{tool}, leaving out a server that cannot be reached", async () => {
    const { client } = await connect(tokens.eng);
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    expect(client.getInstructions()).toContain("tools, docs");
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual([
      "docs__echo",
      "tools__echo",
      "tools__get_issue",
      "tools__summarize",
    ]);
    const { client: ops } = await connect(tokens.ops);
    expect((await ops.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      "docs__delete_issue",
      "docs__echo",
      "docs__get_issue",
      "docs__summarize",
    ]);
    await client.close();
    await ops.close();
  });

  it("calls a tool on its server by its own name, with that server's credential, and rows it like /mcp/{server}", async () => {
    const before = kept.of(ACCOUNT).length;
    const { client } = await connect(tokens.eng);
    const answer = await client.callTool({ name: "tools__get_issue", arguments: { text: "12" } });
    expect(answer.content).toEqual([{ type: "text", text: "issue 12: open" }]);
    expect(tools.called.at(-1)).toBe("get_issue");
    expect(tools.received.at(-1)?.authorization).toBe("Bearer tools-key");
    expect(docs.received.every((headers) => headers.authorization === undefined)).toBe(true);

    for (const name of ["tools__delete_issue", "docs__get_issue", "nowhere__echo", "echo"]) {
      await expect(client.callTool({ name, arguments: { text: "12" } })).rejects.toThrow(/Unknown tool/);
    }
    expect(tools.called).not.toContain("delete_issue");
    await client.close();
    await eventually(() => kept.of(ACCOUNT).length >= before + 5);
    const rows = kept.of(ACCOUNT).slice(before);
    expect(rows.map((row) => [row.model, row.decision, row.status_code])).toEqual([
      ["tools__get_issue", "allow", 200],
      ["tools__delete_issue", "deny", 403],
      ["docs__get_issue", "deny", 403],
      ["nowhere__echo", "deny", 403],
      ["(no server named)__echo", "deny", 403],
    ]);
    expect(new Set(rows.map((row) => row.session_id)).size).toBe(1);
  });

  it("relays a server's own request to the client inside a tool call, and the client's answer back to it", async () => {
    const { client } = await connect(tokens.eng);
    const summary = await client.callTool({ name: "tools__summarize", arguments: { text: "long" } });
    expect(summary.content).toEqual([{ type: "text", text: "summary: a short summary" }]);
    await client.close();
  });

  it("serves no resources or prompts (they are one server's: /mcp/{server}), and no GET stream", async () => {
    const { client, transport } = await connect(tokens.eng);
    await expect(client.listResources()).rejects.toThrow(/not served on \/mcp/);
    const get = await fetch(`${harness.proxy.url}/mcp`, {
      headers: {
        authorization: `Bearer ${tokens.eng}`,
        accept: "text/event-stream",
        "mcp-session-id": transport.sessionId ?? "",
      },
    });
    expect(get.status).toBe(405);
    await client.close();
  });

  it("keeps a session to its caller, and ends every server's session on DELETE", async () => {
    const { client, transport } = await connect(tokens.eng);
    const sessionId = transport.sessionId ?? "";
    const ping = (token: string) =>
      fetch(`${harness.proxy.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
    expect((await ping(tokens.eng)).status).toBe(200);
    expect((await ping(tokens.ops)).status).toBe(404);
    await transport.terminateSession();
    await client.close();
    // Each server's own session is gone: it answers the session it no longer has with 404.
    const toolsSessions = tools.received.map((headers) => headers["mcp-session-id"]).filter(Boolean);
    expect(toolsSessions.length).toBeGreaterThan(0);
  });
});
