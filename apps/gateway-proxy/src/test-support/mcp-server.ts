import { randomUUID } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CreateMessageResultSchema,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

import { z } from "zod";

export interface TestMcpServer {
  url: string;
  /** Headers of every request the server received, in order. */
  received: IncomingHttpHeaders[];
  /** Tool calls the server ran, by tool name. */
  called: string[];
  stop(): Promise<void>;
}

/**
 * A real MCP server (the SDK's `McpServer` over its Streamable HTTP transport, one session per
 * client), standing in for a team's tool server behind the gateway. With `requiredHeader`, a request
 * without that header, or with a value not among those given, is 401, as a server taking an API key
 * (or each user's own token) answers.
 */
export async function startTestMcpServer(
  options: {
    requiredHeader?: { name: string; value: string | readonly string[] };
    /** `sse`: the older HTTP+SSE transport (2024-11-05), a GET stream at the URL and POSTs to `/messages`. */
    transport?: "streamable_http" | "sse";
  } = {},
): Promise<TestMcpServer> {
  const received: IncomingHttpHeaders[] = [];
  const called: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const build = () => {
    const server = new McpServer({ name: "test-tools", version: "1.0.0" });
    const tool = (name: string, run: (text: string, extra: Extra) => Promise<string> | string) =>
      server.registerTool(
        name,
        { description: `the ${name} tool`, inputSchema: { text: z.string() } },
        async ({ text }, extra) => {
          called.push(name);
          return { content: [{ type: "text", text: await run(text, extra) }] };
        },
      );
    tool("echo", (text) => text);
    tool("get_issue", (text) => `issue ${text}: open`);
    tool("delete_issue", (text) => `issue ${text} deleted`);
    // Asks the client's model through the gateway: a server-to-client request inside the tool call
    // (sent on the call's own answer stream, as `extra.sendRequest` does).
    tool("summarize", async (text, extra) => {
      const answer = await extra.sendRequest(
        {
          method: "sampling/createMessage",
          params: {
            messages: [{ role: "user", content: { type: "text", text: `summarize: ${text}` } }],
            maxTokens: 50,
          },
        },
        CreateMessageResultSchema,
      );
      return answer.content.type === "text" ? `summary: ${answer.content.text}` : "summary: (none)";
    });
    server.registerResource("readme", "test://readme", { mimeType: "text/plain" }, async (uri) => ({
      contents: [{ uri: uri.href, text: "read me" }],
    }));
    server.registerPrompt("greet", { argsSchema: { who: z.string() } }, ({ who }) => ({
      messages: [{ role: "user", content: { type: "text", text: `hello ${who}` } }],
    }));
    return server;
  };

  const sseSessions = new Map<string, SSEServerTransport>();
  const serveSse = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "GET") {
      const transport = new SSEServerTransport("/messages", res);
      sseSessions.set(transport.sessionId, transport);
      res.on("close", () => sseSessions.delete(transport.sessionId));
      await build().connect(transport);
      return;
    }
    const sessionId = new URL(req.url ?? "/", "http://localhost").searchParams.get("sessionId") ?? "";
    const transport = sseSessions.get(sessionId);
    if (!transport) {
      res.writeHead(404).end("no such session");
      return;
    }
    await transport.handlePostMessage(req, res);
  };

  const http: Server = createServer(async (req, res) => {
    received.push(req.headers);
    const required = options.requiredHeader;
    const sent = req.headers[required?.name.toLowerCase() ?? ""];
    if (required && (typeof sent !== "string" || ![required.value].flat().includes(sent))) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    if (options.transport === "sse") {
      await serveSse(req, res);
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (typeof sessionId === "string" && !transport) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
      return;
    }
    if (!transport) {
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, fresh);
        },
      });
      fresh.onclose = () => {
        if (fresh.sessionId) sessions.delete(fresh.sessionId);
      };
      await build().connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    called,
    async stop() {
      for (const transport of sessions.values()) await transport.close();
      for (const transport of sseSessions.values()) await transport.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
