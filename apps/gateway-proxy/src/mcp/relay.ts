import type { Caller, GatewayMcpServer } from "@agentnet/contracts";
import { isToolGranted, type McpServerReach, reachableMcpServers } from "@agentnet/gateway-rules";
import { mcpServerCredentialAad, unseal } from "@agentnet/sealing";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import type { Dispatcher } from "undici";
import type { ProxyContext } from "../context";
import { BodyNotUtf8, BodyTooLarge, callerToken, readBody } from "../http/body";
import { sendJson } from "../http/errors";
import type { AccountView } from "../snapshot/cache";
import { privateUpstreamOf } from "../upstream/pools";
import { calledTool, grantedToolList } from "./grants";
import { errorResponse, JSON_RPC, type JsonRpcId, JsonRpcResponse, parseClientMessage } from "./jsonrpc";
import { protectedResourceMetadataUrl } from "./metadata";
import { type McpSessionOwner, openSessionId, sealSessionId } from "./session-token";
import { SseEventRewriter } from "./sse";

/** Headers of a client's request the server needs; everything else (the agentnet token first) stays here. */
const FORWARDED_HEADERS = ["accept", "content-type", "mcp-protocol-version", "last-event-id"] as const;

/** The largest JSON answer read whole (to filter a tool list); the gateway's requests are bounded too. */
const MAX_READ_ANSWER_BYTES = 16 * 1024 * 1024;

/** The server a `/mcp/{server}` path names (a trailing slash allowed), or undefined for any other path. */
export function mcpServerNameOf(path: string): string | undefined {
  const match = /^\/mcp\/([^/]+)\/?$/.exec(path);
  return match?.[1];
}

/**
 * `/mcp/{server}`: one MCP server of the account, relayed over the Streamable HTTP transport
 * (docs/API.md "MCP gateway"). The caller authenticates with their agentnet token; the server is
 * reached only through a policy granting it to one of their groups; `tools/list` shows only the
 * tools granted and a `tools/call` of any other is refused; the server's own session id travels
 * sealed (session-token.ts). Everything else (initialize, ping, resources, prompts, completions,
 * notifications, server-to-client requests and their answers, the GET stream, DELETE) is relayed
 * as it is.
 */
export async function handleMcp(
  ctx: ProxyContext,
  req: HttpRequest,
  res: HttpAnswer,
  serverName: string,
): Promise<void> {
  if (req.method !== "POST" && req.method !== "GET" && req.method !== "DELETE") {
    req.resume();
    answerError(res, 405, null, JSON_RPC.invalidRequest, `${req.method} is not served on an MCP endpoint`, {
      allow: "GET, POST, DELETE",
    });
    return;
  }
  const caller = await authenticateMcp(ctx, req, res);
  if (!caller) return;
  const target = await reachServer(ctx, res, caller, serverName);
  if (!target) {
    req.resume();
    return;
  }
  const owner: McpSessionOwner = {
    accountId: caller.account_id,
    userId: caller.user_id,
    serverId: target.server.id,
  };
  const sessionHeader = headerOf(req, "mcp-session-id");
  const upstreamSession =
    sessionHeader === undefined ? undefined : openSessionId(ctx.sealingKey, owner, sessionHeader);
  if (sessionHeader !== undefined && upstreamSession === undefined) {
    // The client's session is not one of this caller's: as for an expired session, it starts anew.
    req.resume();
    answerError(res, 404, null, JSON_RPC.gatewayRefusal, "session not found: initialize a new one");
    return;
  }
  const relay: Relay = { ctx, req, res, target, owner, upstreamSession };
  if (req.method !== "POST") {
    req.resume();
    await forward(relay, { method: req.method, body: undefined, filterTools: undefined });
    return;
  }
  let text: string;
  try {
    text = await readBody(req, ctx.options.bodyLimitBytes);
  } catch (error) {
    if (error instanceof BodyTooLarge) {
      answerError(res, 413, null, JSON_RPC.invalidRequest, "request body too large");
      return;
    }
    if (error instanceof BodyNotUtf8) {
      answerError(res, 400, null, JSON_RPC.parseError, "the request body is not valid UTF-8");
      return;
    }
    throw error;
  }
  const parsed = parseClientMessage(text);
  if (!("kind" in parsed)) {
    answerError(res, 400, parsed.id, parsed.code, parsed.message);
    return;
  }
  if (parsed.kind !== "request") {
    await forward(relay, { method: "POST", body: text, filterTools: undefined });
    return;
  }
  const { id, method, params } = parsed.message;
  if (method === "server/discover") {
    // The 2026-07-28 revision's discovery: a 400 makes clients fall back to `initialize`.
    answerError(res, 400, id, JSON_RPC.methodNotFound, "server/discover is not supported: use initialize");
    return;
  }
  if (method === "tools/call") {
    const tool = calledTool(params);
    if (tool === undefined || !isToolGranted(target.reach, tool)) {
      // As the MCP schema answers an unknown tool (-32602): a tool not granted is one the caller cannot see.
      sendJson(
        res,
        200,
        errorResponse(
          id,
          JSON_RPC.invalidParams,
          `Unknown tool: ${tool ?? "(none named)"}: no policy grants it to you on ${target.server.name}`,
          { reason: "mcp.tool_not_granted" },
        ),
      );
      return;
    }
  }
  await forward(relay, {
    method: "POST",
    body: text,
    filterTools: method === "tools/list" ? { id } : undefined,
  });
}

interface Target {
  view: AccountView;
  server: GatewayMcpServer;
  reach: McpServerReach<GatewayMcpServer, unknown>;
}

interface Relay {
  ctx: ProxyContext;
  req: HttpRequest;
  res: HttpAnswer;
  target: Target;
  owner: McpSessionOwner;
  upstreamSession: string | undefined;
}

/** The caller, or undefined after answering 401 with where to learn how to authenticate (RFC 9728). */
async function authenticateMcp(
  ctx: ProxyContext,
  req: HttpRequest,
  res: HttpAnswer,
): Promise<Caller | undefined> {
  const token = callerToken(req);
  const challenge = (error: string, description: string) => {
    req.resume();
    answerError(res, 401, null, JSON_RPC.gatewayRefusal, description, {
      "www-authenticate": `Bearer error="${error}", error_description="${description}", resource_metadata="${protectedResourceMetadataUrl(req, ctx.options.trustProxy)}"`,
    });
  };
  if (!token) {
    challenge("invalid_request", "send your agentnet token as Authorization: Bearer");
    return undefined;
  }
  let caller: Caller | undefined;
  try {
    caller = await ctx.callers.get(token);
  } catch (error) {
    ctx.logger.warn({ err: error }, "resolving a token failed");
    req.resume();
    answerError(res, 503, null, JSON_RPC.gatewayRefusal, "the token cannot be checked right now; try again");
    return undefined;
  }
  if (!caller) challenge("invalid_token", "invalid or expired token");
  return caller;
}

/** The named server with the caller's grants of it, or undefined after answering why not. */
async function reachServer(
  ctx: ProxyContext,
  res: HttpAnswer,
  caller: Caller,
  serverName: string,
): Promise<Target | undefined> {
  let view: AccountView;
  try {
    view = await ctx.snapshots.get(caller.account_id);
  } catch {
    answerError(
      res,
      503,
      null,
      JSON_RPC.gatewayRefusal,
      "the gateway configuration cannot be loaded; try again",
    );
    return undefined;
  }
  const { snapshot } = view;
  if (!snapshot.settings) {
    answerError(res, 403, null, JSON_RPC.gatewayRefusal, "this account has no agent network configured");
    return undefined;
  }
  const server = snapshot.mcp_servers.find((candidate) => candidate.name === serverName);
  if (!server) {
    answerError(res, 404, null, JSON_RPC.gatewayRefusal, `no MCP server named ${serverName}`);
    return undefined;
  }
  const reach = reachableMcpServers([server], snapshot.policies, caller.group_ids)[0];
  if (!reach) {
    const why = server.enabled ? "no policy grants it to you" : "it is disabled";
    answerError(res, 403, null, JSON_RPC.gatewayRefusal, `MCP server ${serverName} is not reachable: ${why}`);
    return undefined;
  }
  return { view, server, reach };
}

/**
 * Sends the request on to the server and its answer back: as it streams, except a tool list,
 * whose granted part is all the caller sees.
 */
async function forward(
  relay: Relay,
  request: { method: string; body: string | undefined; filterTools: { id: JsonRpcId } | undefined },
): Promise<void> {
  const { ctx, req, res, target } = relay;
  const url = new URL(target.server.url);
  const headers: Record<string, string> = { "user-agent": "agentnet-mcp-gateway" };
  for (const name of FORWARDED_HEADERS) {
    const value = headerOf(req, name);
    if (value !== undefined) headers[name] = value;
  }
  if (relay.upstreamSession !== undefined) headers["mcp-session-id"] = relay.upstreamSession;
  const credential = credentialOf(ctx, target.view, target.server);
  if (credential) headers[credential.header.toLowerCase()] = credential.value;

  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.on("close", onClose);
  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await ctx.pools.get(url.origin, target.server.skip_tls_verification).pool.request({
      method: request.method as Dispatcher.HttpMethod,
      path: `${url.pathname}${url.search}`,
      headers,
      body: request.body ?? null,
      signal: abort.signal,
      // A GET stream may stay quiet for long: it ends when the client or the server closes it.
      ...(request.method === "GET" ? { bodyTimeout: 0 } : {}),
    });
  } catch (error) {
    res.off("close", onClose);
    if (abort.signal.aborted) return;
    const refused = privateUpstreamOf(error);
    const reason = refused ? `it is refused (${refused.message})` : "it cannot be reached";
    ctx.logger.warn({ server: target.server.id, err: error }, "MCP server unreachable");
    answerError(res, 502, null, JSON_RPC.gatewayRefusal, `MCP server ${target.server.name}: ${reason}`);
    return;
  }
  try {
    await answer(relay, upstream, request.filterTools);
  } catch (error) {
    if (!abort.signal.aborted) {
      ctx.logger.warn({ server: target.server.id, err: error }, "MCP answer cut");
      res.destroy();
    }
  } finally {
    res.off("close", onClose);
  }
}

/** Relays the server's answer: its status and the headers MCP defines, its session id sealed. */
async function answer(
  relay: Relay,
  upstream: Dispatcher.ResponseData,
  filterTools: { id: JsonRpcId } | undefined,
): Promise<void> {
  const { ctx, res, target, owner } = relay;
  const headers: Record<string, string> = {};
  const contentType = String(upstream.headers["content-type"] ?? "");
  if (contentType) headers["content-type"] = contentType;
  const session = upstream.headers["mcp-session-id"];
  if (typeof session === "string" && session !== "") {
    headers["mcp-session-id"] = sealSessionId(ctx.sealingKey, owner, session);
  }
  if (contentType.includes("text/event-stream")) {
    headers["cache-control"] = "no-cache";
    res.writeHead(upstream.statusCode, headers);
    res.flushHeaders?.();
    const granted = (tool: string) => isToolGranted(target.reach, tool);
    const rewriter = filterTools
      ? new SseEventRewriter((data) => filteredAnswer(data, filterTools.id, granted))
      : undefined;
    for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
      const out = rewriter ? rewriter.push(chunk) : chunk;
      if (out.length > 0) res.write(out);
    }
    if (rewriter) res.write(rewriter.end());
    res.end();
    return;
  }
  if (filterTools && contentType.includes("application/json") && upstream.statusCode === 200) {
    const text = await upstream.body.text();
    const filtered =
      text.length <= MAX_READ_ANSWER_BYTES
        ? filteredAnswer(text, filterTools.id, (tool) => isToolGranted(target.reach, tool))
        : undefined;
    const body = filtered ?? text;
    res.writeHead(upstream.statusCode, { ...headers, "content-length": String(Buffer.byteLength(body)) });
    res.end(body);
    return;
  }
  res.writeHead(upstream.statusCode, headers);
  for await (const chunk of upstream.body as AsyncIterable<Buffer>) res.write(chunk);
  res.end();
}

/** The answer to the tool list asked for, with only granted tools; undefined for any other message. */
function filteredAnswer(data: string, id: JsonRpcId, granted: (tool: string) => boolean): string | undefined {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return undefined;
  }
  const parsed = JsonRpcResponse.safeParse(message);
  if (!parsed.success || parsed.data.id !== id || !("result" in parsed.data)) return undefined;
  return JSON.stringify({ ...parsed.data, result: grantedToolList(parsed.data.result, granted) });
}

/** The server's credential header, unsealed once per snapshot (a changed credential arrives as a new one). */
function credentialOf(
  ctx: ProxyContext,
  view: AccountView,
  server: GatewayMcpServer,
): { header: string; value: string } | undefined {
  if (server.credential.kind !== "header" || !server.sealed_credential) return undefined;
  const key = `mcp-server:${server.id}`;
  let value = view.keys.get(key);
  if (value === undefined) {
    value = unseal(
      ctx.sealingKey,
      server.sealed_credential,
      mcpServerCredentialAad(view.snapshot.account_id, server.id),
    );
    view.keys.set(key, value);
  }
  return { header: server.credential.header_name, value };
}

const headerOf = (req: HttpRequest, name: string): string | undefined => {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === "" ? undefined : first;
};

function answerError(
  res: HttpAnswer,
  status: number,
  id: JsonRpcId | null,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, errorResponse(id, code, message), headers);
}
