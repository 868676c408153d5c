import type { Caller, GatewayMcpServer } from "@agentnet/contracts";
import { isToolGranted, reachableMcpServers } from "@agentnet/gateway-rules";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import type { ProxyContext } from "../context";
import { checkHost } from "../domain/host";
import { callerToken } from "../http/body";
import type { AccountView } from "../snapshot/cache";
import { runToolCall, type ToolCallRoute } from "./call";
import {
  type CallerCredential,
  CREDENTIAL_MISSING,
  callerCredential,
  credentialMissing,
  isUnavailable,
} from "./credentials";
import { calledTool, grantedToolList } from "./grants";
import { JSON_RPC } from "./jsonrpc";
import { protectedResourceMetadataUrl } from "./metadata";
import { type McpSessionOwner, openSessionId } from "./session-token";
import { answerError, forward, headerOf, type Relay, readClientMessage, type Target } from "./upstream";

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
  const target = await reachServer(ctx, req, res, caller, serverName);
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
  const session =
    sessionHeader === undefined || upstreamSession === undefined
      ? undefined
      : { sealed: sessionHeader, upstream: upstreamSession };
  const relay: Relay = { ctx, req, res, caller, target, owner, session };
  const missing = target.credential === "missing" ? credentialMissing(target.server) : undefined;
  if (req.method !== "POST") {
    req.resume();
    if (missing)
      answerError(res, 403, null, JSON_RPC.gatewayRefusal, missing, {}, { reason: CREDENTIAL_MISSING });
    else await forward(relay, { method: req.method, body: undefined });
    return;
  }
  const read = await readClientMessage(ctx, req, res);
  if (!read) return;
  const { text, parsed } = read;
  if (parsed.kind === "request" && parsed.message.method === "server/discover") {
    // The 2026-07-28 revision's discovery: a 400 makes clients fall back to `initialize`.
    answerError(
      res,
      400,
      parsed.message.id,
      JSON_RPC.methodNotFound,
      "server/discover is not supported: use initialize",
    );
    return;
  }
  if (missing && !(parsed.kind === "request" && parsed.message.method === "tools/call")) {
    // Nothing reaches the server without the caller's own credential; a call is refused with its row below.
    const id = parsed.kind === "request" ? parsed.message.id : null;
    answerError(res, 403, id, JSON_RPC.gatewayRefusal, missing, {}, { reason: CREDENTIAL_MISSING });
    return;
  }
  if (parsed.kind !== "request") {
    await forward(relay, { method: "POST", body: text });
    return;
  }
  const { id, method } = parsed.message;
  if (method === "tools/call") {
    const route: ToolCallRoute = {
      caller,
      view: target.view,
      server: target.server,
      tool: calledTool(parsed.message.params),
      relay,
      grants: target.reach.grants,
      session: session ? `${target.server.id}\n${session.upstream}` : undefined,
      credentialMissing: missing !== undefined,
    };
    await runToolCall(ctx, req, res, route, parsed.message, text);
    return;
  }
  const granted = (tool: string) => isToolGranted(target.reach, tool, target.view.guardrails);
  await forward(relay, {
    method: "POST",
    body: text,
    ...(method === "tools/list"
      ? { watch: { id, rewrite: (result) => grantedToolList(result, granted) } }
      : {}),
  });
}

/** The caller, or undefined after answering 401 with where to learn how to authenticate (RFC 9728). */
export async function authenticateMcp(
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

/** The caller's account view, or undefined after answering why there is none to serve. */
export async function mcpAccountView(
  ctx: ProxyContext,
  req: HttpRequest,
  res: HttpAnswer,
  caller: Caller,
): Promise<AccountView | undefined> {
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
  const { settings } = view.snapshot;
  if (!settings) {
    answerError(res, 403, null, JSON_RPC.gatewayRefusal, "this account has no agent network configured");
    return undefined;
  }
  // As for model calls: a token is served at its own account's endpoint (or on loopback).
  if (!checkHost(settings.endpoint, headerOf(req, "host") ?? headerOf(req, ":authority")).ok) {
    answerError(
      res,
      403,
      null,
      JSON_RPC.gatewayRefusal,
      "this token's account is served at another endpoint",
    );
    return undefined;
  }
  return view;
}

/** The named server with the caller's grants of it, or undefined after answering why not. */
async function reachServer(
  ctx: ProxyContext,
  req: HttpRequest,
  res: HttpAnswer,
  caller: Caller,
  serverName: string,
): Promise<Target | undefined> {
  const view = await mcpAccountView(ctx, req, res, caller);
  if (!view) return undefined;
  const { snapshot } = view;
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
  const credential = (await callerCredentials(ctx, view, [server], caller)).get(server.id);
  if (isUnavailable(credential)) {
    answerError(
      res,
      502,
      null,
      JSON_RPC.gatewayRefusal,
      `MCP server ${serverName}: ${credential.unavailable}`,
    );
    return undefined;
  }
  return { view, server, reach, credential };
}

/**
 * The caller's credential for each of `servers` by id (`callerCredential`); one that cannot be had
 * now (the control-plane not answering, a credential that does not open, or with `waitMs` one not
 * had within it: a token still being minted, kept for the next request) is `unavailable`: its
 * server answers 502, or is left out of `/mcp`, and one server never breaks the rest.
 */
export async function callerCredentials(
  ctx: ProxyContext,
  view: AccountView,
  servers: readonly GatewayMcpServer[],
  caller: Caller,
  waitMs?: number,
): Promise<Map<string, CallerCredential>> {
  const lookUp = async (server: GatewayMcpServer): Promise<CallerCredential> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const looked = callerCredential(ctx, view, server, caller.user_id);
      if (waitMs === undefined) return await looked;
      looked.catch(() => undefined);
      const late = new Promise<CallerCredential>((resolve) => {
        timer = setTimeout(
          () => resolve({ unavailable: "its credential is still being fetched; try again" }),
          waitMs,
        );
      });
      return await Promise.race([looked, late]);
    } catch (error) {
      ctx.logger.warn({ err: error, server: server.id }, "looking up a caller's MCP credential failed");
      return { unavailable: "the credential for it cannot be had right now; try again" };
    } finally {
      clearTimeout(timer);
    }
  };
  return new Map(
    await Promise.all(servers.map(async (server) => [server.id, await lookUp(server)] as const)),
  );
}
