import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServerGrant } from "@agentnet/contracts";
import { eventually } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeMcpServer, makePolicy } from "../test-support/factories";
import { type ProxyHarness, startProxyHarness } from "../test-support/proxy-harness";
import { keptEvents } from "../test-support/requests";

const ACCOUNT = "acc_mcp_faults";
const kept = keptEvents();
let harness: ProxyHarness;
let server: Server;
let token: string;

/**
 * An MCP server that misbehaves on purpose, by the tool called: `hang` never answers, `cut` starts
 * an event stream and dies in it, `drop` closes the connection without an answer.
 */
function startMisbehavingServer(): Promise<string> {
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    req.on("end", () => {
      const message = JSON.parse(text || "{}") as {
        id?: number;
        method?: string;
        params?: { name?: string };
      };
      if (message.method === "initialize") {
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" });
        res.end(
          JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: "2025-06-18" } }),
        );
        return;
      }
      const tool = message.params?.name;
      if (tool === "hang") return;
      if (tool === "drop") {
        req.socket.destroy();
        return;
      }
      if (tool === "cut") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } })}\n\n`,
        );
        setTimeout(() => req.socket.destroy(), 50);
        return;
      }
      res.writeHead(202).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
    ),
  );
}

beforeAll(async () => {
  harness = await startProxyHarness("mcp-faults", { publish: kept.publish, headersTimeoutMs: 500 });
  const url = await startMisbehavingServer();
  ({
    tokens: [token = ""],
  } = harness.accountOf(
    {
      mcp_servers: [makeMcpServer({ id: "mcp_bad", name: "bad", url })],
      policies: [
        makePolicy({
          source_groups: ["grp_eng"],
          destination_provider_ids: [],
          mcp_servers: [McpServerGrant.parse({ server_id: "mcp_bad" })],
        }),
      ],
    },
    [{ group_ids: ["grp_eng"] }],
    ACCOUNT,
  ));
});
afterAll(async () => {
  await harness.stop();
  server.closeAllConnections();
  server.close();
});

const call = (tool: string) =>
  fetch(`${harness.proxy.url}/mcp/bad`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: tool, arguments: {} },
    }),
  });

describe("an MCP server that hangs or dies", () => {
  it("answers a call the server never answers with a JSON-RPC error after the proxy's wait, and rows it 504", async () => {
    const before = kept.of(ACCOUNT).length;
    const answer = await call("hang");
    expect(answer.status).toBe(504);
    expect(await answer.json()).toMatchObject({
      jsonrpc: "2.0",
      id: 7,
      error: { message: "MCP server bad: it did not answer in time" },
    });
    await eventually(() => kept.of(ACCOUNT).length > before);
    expect(kept.of(ACCOUNT).at(-1)).toMatchObject({
      model: "bad__hang",
      decision: "allow",
      status_code: 504,
    });
  });

  it("answers a call whose connection the server drops with a JSON-RPC error, and rows it 502", async () => {
    const before = kept.of(ACCOUNT).length;
    const answer = await call("drop");
    expect(answer.status).toBe(502);
    expect(await answer.json()).toMatchObject({ id: 7, error: { message: expect.stringContaining("bad") } });
    await eventually(() => kept.of(ACCOUNT).length > before);
    expect(kept.of(ACCOUNT).at(-1)).toMatchObject({ model: "bad__drop", status_code: 502, cost_usd: 0 });
  });

  it("cuts the client's stream where the server's died, and rows the call 502 with what was relayed", async () => {
    const before = kept.of(ACCOUNT).length;
    const answer = await call("cut");
    expect(answer.status).toBe(200);
    const read = await answer.text().then(
      (text) => ({ text }),
      (error: unknown) => ({ error }),
    );
    if ("text" in read) expect(read.text).not.toContain('"id":7');
    await eventually(() => kept.of(ACCOUNT).length > before);
    const row = kept.of(ACCOUNT).at(-1);
    expect(row).toMatchObject({ model: "bad__cut", status_code: 502 });
    expect(row?.tool_call?.response_bytes).toBeGreaterThan(0);
  });

  it("keeps serving afterwards", async () => {
    expect((await call("other")).status).toBe(202);
  });
});
