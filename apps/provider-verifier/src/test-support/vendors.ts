import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { bedrockScenario } from "./bedrock-vendor";
import type { TestPki } from "./tls";

/** The credential every scenario accepts; tests assert it never shows up in an error. */
export const GOOD_KEY = "sk-test-SECRET-0123456789abcdef";

export interface SeenRequest {
  host: string;
  path: string;
  headers: IncomingMessage["headers"];
}

type Scenario = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

const bearerOk = (req: IncomingMessage) => req.headers.authorization === `Bearer ${GOOD_KEY}`;

const ANTHROPIC_PAGES: Record<string, unknown> = {
  "": {
    data: [
      { id: "claude-sonnet-4-20250514", display_name: "Claude Sonnet 4", type: "model" },
      { id: "claude-opus-4-1-20250805", display_name: "Claude Opus 4.1", type: "model" },
    ],
    has_more: true,
    first_id: "claude-sonnet-4-20250514",
    last_id: "claude-opus-4-1-20250805",
  },
  "claude-opus-4-1-20250805": {
    data: [{ id: "claude-next-1", display_name: "Claude Next", type: "model" }],
    has_more: false,
    first_id: "claude-next-1",
    last_id: "claude-next-1",
  },
};

/**
 * Which bearer tokens the Vertex scenario takes: a test points it at its local Google token
 * endpoint (`GoogleTokenServer.accepts`), so only a token minted from its service-account key lists.
 */
export const vertexTokens: { accepts: (token: string | undefined) => boolean } = { accepts: () => false };

/**
 * A minimal MCP server on the Streamable HTTP transport, taking GOOD_KEY in `x-api-key`: it answers
 * `initialize` as JSON with a session id, `tools/list` as an event stream, notifications with 202,
 * and DELETE of its session; what it was asked is in `mcpCalls`.
 */
export const mcpCalls: string[] = [];
const MCP_SESSION = "mcp-session-1";
const mcpScenario: Scenario = (req, res, url) => {
  if (url.pathname !== "/mcp") return json(res, 404, {});
  if (req.headers["x-api-key"] !== GOOD_KEY) return json(res, 401, { error: "unauthorized" });
  if (req.method === "DELETE") {
    mcpCalls.push("DELETE");
    res.writeHead(200).end();
    return;
  }
  let text = "";
  req.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  req.on("end", () => {
    const message = JSON.parse(text) as { id?: number; method: string };
    mcpCalls.push(message.method);
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    if (message.method === "initialize") {
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": MCP_SESSION });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            protocolVersion: "2025-06-18",
            capabilities: { tools: {} },
            serverInfo: { name: "t", version: "1" },
          },
        }),
      );
      return;
    }
    if (req.headers["mcp-session-id"] !== MCP_SESSION) return json(res, 404, { error: "no session" });
    const tools = [
      { name: "search", inputSchema: { type: "object" } },
      { name: "fetch", inputSchema: { type: "object" } },
    ];
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { tools } })}\n\n`,
    );
  });
};

/** One vendor behaviour per hostname (the Host header), all on the same local HTTPS server. */
const SCENARIOS: Record<string, Scenario> = {
  "ok.vendor.test": (req, res, url) => {
    if (url.pathname !== "/v1/models") return json(res, 404, { error: "not found" });
    if (!bearerOk(req)) return json(res, 401, { error: { message: `Incorrect API key provided` } });
    json(res, 200, {
      object: "list",
      data: [
        { id: "gpt-4o", object: "model", owned_by: "system" },
        { id: "gpt-4o-2024-08-06", object: "model" },
        { id: "ft:gpt-4o:acme:custom", object: "model" },
      ],
    });
  },
  // Vendors like to echo the key they refused; the verifier must never pass that on.
  "denied.vendor.test": (req, res) =>
    json(res, 401, { error: { message: `Incorrect API key provided: ${req.headers.authorization}` } }),
  "forbidden.vendor.test": (_req, res) => json(res, 403, { error: "forbidden" }),
  "outage.vendor.test": (_req, res) => json(res, 500, { error: "internal" }),
  "gone.vendor.test": (_req, res) => json(res, 404, { error: "no such route" }),
  "slow.vendor.test": (_req, res) => {
    const timer = setTimeout(() => json(res, 200, { data: [] }), 10_000);
    res.on("close", () => clearTimeout(timer));
  },
  "redirect.vendor.test": (_req, res) => {
    res.writeHead(302, { location: "https://ok.vendor.test/v1/models" });
    res.end();
  },
  "huge.vendor.test": (_req, res) => {
    // Chunked, with no content-length: only counting the stream catches it.
    res.writeHead(200, { "content-type": "application/json" });
    res.write('{"data":[');
    const chunk = `${'{"id":"padding-model-id-xxxxxxxxxxxxxxxxxxxxxxxx"},'.repeat(1000)}`;
    let sent = 0;
    const pump = () => {
      while (sent < 40 && res.write(chunk)) sent++;
      if (sent < 40) res.once("drain", pump);
      else res.end('{"id":"last"}]}');
    };
    pump();
  },
  "garbage.vendor.test": (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html>welcome to our parking page</html>");
  },
  "wrongshape.vendor.test": (_req, res) => json(res, 200, { models: ["gpt-4o"] }),
  "reset.vendor.test": (req) => req.socket.destroy(),
  "anthropic.vendor.test": (req, res, url) => {
    if (url.pathname !== "/v1/models") return json(res, 404, {});
    if (req.headers["x-api-key"] !== GOOD_KEY) return json(res, 401, { type: "error" });
    if (req.headers["anthropic-version"] !== "2023-06-01") return json(res, 400, { type: "error" });
    json(res, 200, ANTHROPIC_PAGES[url.searchParams.get("after_id") ?? ""] ?? { data: [], has_more: false });
  },
  "endless.vendor.test": (_req, res, url) => {
    const n = Number(url.searchParams.get("after_id") ?? "0") + 1;
    json(res, 200, { data: [{ id: `m-${n}` }], has_more: true, last_id: String(n) });
  },
  "vertex.vendor.test": (req, res, url) => {
    if (url.pathname !== "/v1beta1/publishers/google/models") return json(res, 404, {});
    const token = req.headers.authorization?.replace(/^Bearer /, "");
    if (!vertexTokens.accepts(token)) {
      return json(res, 401, { error: { code: 401, status: "UNAUTHENTICATED", message: "invalid token" } });
    }
    json(res, 200, {
      publisherModels: [
        { name: "publishers/google/models/gemini-2.5-pro" },
        { name: "publishers/google/models/gemini-2.5-flash" },
      ],
    });
  },
  "bedrock.vendor.test": bedrockScenario(GOOD_KEY),
  "mcp.vendor.test": mcpScenario,
  "azure.vendor.test": (req, res, url) => {
    if (url.pathname !== "/openai/deployments" || url.searchParams.get("api-version") !== "2022-12-01") {
      return json(res, 404, {});
    }
    if (req.headers["api-key"] !== GOOD_KEY) return json(res, 401, {});
    json(res, 200, {
      object: "list",
      data: [
        { id: "prod-4o", model: "gpt-4o", status: "succeeded", object: "deployment" },
        { id: "lab", model: "gpt-99-preview", status: "succeeded", object: "deployment" },
      ],
    });
  },
};

export const VENDOR_HOSTS = Object.keys(SCENARIOS);

export interface VendorServer {
  port: number;
  seen: SeenRequest[];
  seenBy: (host: string) => SeenRequest[];
  close: () => Promise<void>;
}

/** A local HTTPS "internet" of vendors; every request is recorded. */
export async function startVendors(pki: Pick<TestPki, "certPem" | "keyPem">): Promise<VendorServer> {
  const seen: SeenRequest[] = [];
  const server: Server = createHttpsServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    const url = new URL(req.url ?? "/", "https://vendor.invalid");
    seen.push({ host, path: req.url ?? "", headers: req.headers });
    const scenario = SCENARIOS[host];
    if (scenario) scenario(req, res, url);
    else json(res, 421, { error: `no scenario for ${host}` });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    port,
    seen,
    seenBy: (host) => seen.filter((r) => r.host === host),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** A port nothing listens on: bound once, then released. */
export async function closedPort(): Promise<number> {
  const { createServer } = await import("node:net");
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, "close");
  return port;
}
