import { createServer, type Server, type ServerResponse } from "node:http";
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

/**
 * A server on the HTTP+SSE transport that opens its sessions and then never answers a tool call,
 * its stream kept busy with comments (so only an overall deadline ends the wait, not undici's wait
 * for the next bytes). `streams` counts the event streams it was asked for.
 */
function startHangingSseServer(): Promise<{ url: string; streams: () => number; stop: () => void }> {
  const sessions = new Map<string, ServerResponse>();
  let opened = 0;
  const legacy = createServer((req, res) => {
    if (req.method === "GET") {
      const session = String(++opened);
      sessions.set(session, res);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`event: endpoint\ndata: /messages?session=${session}\n\n`);
      const busy = setInterval(() => res.write(": still here\n\n"), 100);
      res.on("close", () => {
        clearInterval(busy);
        sessions.delete(session);
      });
      return;
    }
    let text = "";
    req.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    req.on("end", () => {
      const stream = sessions.get(new URL(req.url ?? "", "http://x").searchParams.get("session") ?? "");
      const message = JSON.parse(text) as { id?: string | number; method?: string };
      res.writeHead(202).end();
      if (message.method === "initialize") {
        const result = {
          protocolVersion: "2024-11-05",
          capabilities: { tools: {} },
          serverInfo: { name: "slow" },
        };
        stream?.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, result })}\n\n`,
        );
      }
    });
  });
  return new Promise((resolve) =>
    legacy.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(legacy.address() as AddressInfo).port}/sse`,
        streams: () => opened,
        stop: () => {
          legacy.closeAllConnections();
          legacy.close();
        },
      }),
    ),
  );
}

describe("a server on the HTTP+SSE transport that never answers", () => {
  const SSE_ACCOUNT = "acc_mcp_sse_faults";
  let bridging: ProxyHarness;
  let legacy: Awaited<ReturnType<typeof startHangingSseServer>>;
  let caller: string;
  beforeAll(async () => {
    // Two connections per origin: one may carry a bridged stream; a body timeout of 1 s is the
    // bridge's deadline.
    bridging = await startProxyHarness("mcp-sse-faults", {
      connectionsPerOrigin: 2,
      bodyTimeoutMs: 1_000,
      upstreamWaitMs: 200,
    });
    legacy = await startHangingSseServer();
    ({
      tokens: [caller = ""],
    } = bridging.accountOf(
      {
        mcp_servers: [makeMcpServer({ id: "mcp_slow", name: "slow", url: legacy.url, transport: "sse" })],
        policies: [
          makePolicy({
            source_groups: ["grp_eng"],
            destination_provider_ids: [],
            mcp_servers: [McpServerGrant.parse({ server_id: "mcp_slow" })],
          }),
        ],
      },
      [{ group_ids: ["grp_eng"] }],
      SSE_ACCOUNT,
    ));
  });
  afterAll(async () => {
    await bridging.stop();
    legacy.stop();
  });

  const callSlow = () =>
    fetch(`${bridging.proxy.url}/mcp/slow`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${caller}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "wait", arguments: {} },
      }),
    });

  it("answers 504 once the proxy's body timeout has passed, though the stream never went quiet", async () => {
    const startedAt = Date.now();
    const answer = await callSlow();
    // Status and body at once: a wrong status says which refusal it was.
    expect({ status: answer.status, body: await answer.json() }).toMatchObject({
      status: 504,
      body: { id: 9, error: { message: "MCP server slow did not answer within 1 s" } },
    });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
  });

  it("carries bridged streams on at most half the origin's connections: a request past that waits, then is 503", async () => {
    const streamsBefore = legacy.streams();
    const first = callSlow();
    await eventually(() => legacy.streams() > streamsBefore);
    const second = await callSlow();
    expect({ status: second.status, body: await second.json() }).toMatchObject({
      status: 503,
      body: {
        id: 9,
        error: { message: expect.stringContaining("as many bridged sessions open to it as it allows") },
      },
    });
    expect((await first).status).toBe(504);
    expect(legacy.streams()).toBe(streamsBefore + 1);
  });
});
