import { type Caller, Events, type McpServerGrant, type Policy } from "@agentnet/contracts";
import { grantAllowsTool, isToolGranted, reachableMcpServers } from "@agentnet/gateway-rules";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import type { ProxyContext } from "../context";
import { captured, capturePlan } from "../domain/capture";
import { sessionIdFrom } from "../domain/session";
import { BodyNotUtf8, BodyTooLarge, callerToken, readBody, sourceIp } from "../http/body";
import { requestId } from "../http/request-id";
import type { AccountView } from "../snapshot/cache";
import { calledTool, grantedToolList } from "./grants";
import { JSON_RPC, type JsonRpcRequest, parseClientMessage } from "./jsonrpc";
import { protectedResourceMetadataUrl } from "./metadata";
import { type McpSessionOwner, openSessionId } from "./session-token";
import { type ToolCallRecord, toolCallEvent, toolCallSession } from "./tool-call";
import { answerError, forward, headerOf, type Relay, type Target } from "./upstream";

const NO_COLLECTION = { enable_log_collection: false, enable_prompt_collection: false, redact_pii: false };

/** The status a tool call refused by the grants is logged with (the client gets a JSON-RPC error). */
const TOOL_REFUSED_STATUS = 403;

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
  const session =
    sessionHeader === undefined || upstreamSession === undefined
      ? undefined
      : { sealed: sessionHeader, upstream: upstreamSession };
  const relay: Relay = { ctx, req, res, caller, target, owner, session };
  if (req.method !== "POST") {
    req.resume();
    await forward(relay, { method: req.method, body: undefined });
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
    await forward(relay, { method: "POST", body: text });
    return;
  }
  const { id, method } = parsed.message;
  if (method === "server/discover") {
    // The 2026-07-28 revision's discovery: a 400 makes clients fall back to `initialize`.
    answerError(res, 400, id, JSON_RPC.methodNotFound, "server/discover is not supported: use initialize");
    return;
  }
  if (method === "tools/call") {
    const route: ToolCallRoute = {
      caller,
      view: target.view,
      server: target.server,
      tool: calledTool(parsed.message.params),
      relay,
      grants: target.reach.grants,
      session: session ? `${target.server.id}\n${session.upstream}` : undefined,
    };
    await runToolCall(ctx, req, res, route, parsed.message, text);
    return;
  }
  const granted = (tool: string) => isToolGranted(target.reach, tool);
  await forward(relay, {
    method: "POST",
    body: text,
    ...(method === "tools/list"
      ? { watch: { id, rewrite: (result) => grantedToolList(result, granted) } }
      : {}),
  });
}

/** Where a `tools/call` goes, as `/mcp/{server}` or `/mcp` resolved it. */
export interface ToolCallRoute {
  caller: Caller;
  view: AccountView;
  server: ToolCallRecord["server"];
  tool: string | undefined;
  /** The relay to the server; undefined when the caller does not reach it. */
  relay: Relay | undefined;
  grants: readonly { policy: Policy; grant: McpServerGrant }[];
  /** What the row's session is a digest of when the client names none: its MCP session. */
  session: string | undefined;
}

/**
 * A `tools/call`: relayed when a grant lets the tool through, answered by the gateway otherwise,
 * and either way one row (`toolCallEvent`), its arguments and answer captured as the granting
 * policy's capture plan says.
 */
export async function runToolCall(
  ctx: ProxyContext,
  req: HttpRequest,
  res: HttpAnswer,
  route: ToolCallRoute,
  message: JsonRpcRequest,
  text: string,
): Promise<void> {
  const startedAt = Date.now();
  const { tool, server } = route;
  const granting =
    tool === undefined || !route.relay
      ? undefined
      : route.grants.find(({ grant }) => grantAllowsTool(grant, tool));
  // Accounts without settings were answered before: they are not here.
  const settings = route.view.snapshot.settings ?? NO_COLLECTION;
  const plan = capturePlan(settings, granting?.policy, route.view.guardrails);
  const record: ToolCallRecord = {
    id: requestId(),
    startedAt,
    endedAt: startedAt,
    caller: route.caller,
    settings,
    server,
    policyId: granting?.policy.id ?? "",
    tool: tool ?? "",
    sourceIp: sourceIp(req, ctx.options.trustProxy),
    path: req.url ?? "",
    sessionId: toolCallSession(sessionIdFrom(req.headers), route.session),
    decision: "deny",
    denyReason: "mcp.tool_not_granted",
    status: TOOL_REFUSED_STATUS,
    requestBytes: Buffer.byteLength(text),
    responseBytes: 0,
  };
  const args = captured(JSON.stringify(message.params?.arguments ?? {}), plan);
  if (args !== undefined) record.arguments = args;
  if (!granting || !route.relay) {
    // As the MCP schema answers an unknown tool (-32602): a tool not granted is one the caller cannot see.
    record.responseBytes = answerError(
      res,
      200,
      message.id,
      JSON_RPC.invalidParams,
      `Unknown tool: ${tool ?? "(none named)"}: no policy grants it to you on ${server.name}`,
      {},
      { reason: "mcp.tool_not_granted" },
    );
  } else {
    const outcome = await forward(route.relay, {
      method: "POST",
      body: text,
      watch: {
        id: message.id,
        seen: (answer) => {
          const shown = captured(JSON.stringify("result" in answer ? answer.result : answer.error), plan);
          if (shown !== undefined) record.answer = shown;
        },
      },
    });
    Object.assign(record, {
      decision: "allow",
      denyReason: "",
      status: outcome.status,
      responseBytes: outcome.bytes,
      path: new URL(server.url).pathname,
    });
  }
  record.endedAt = Date.now();
  const event = toolCallEvent(record);
  ctx.publisher.enqueue(Events.requests(event.account_id), event, event.id);
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
  if (!view.snapshot.settings) {
    answerError(res, 403, null, JSON_RPC.gatewayRefusal, "this account has no agent network configured");
    return undefined;
  }
  return view;
}

/** The named server with the caller's grants of it, or undefined after answering why not. */
async function reachServer(
  ctx: ProxyContext,
  res: HttpAnswer,
  caller: Caller,
  serverName: string,
): Promise<Target | undefined> {
  const view = await mcpAccountView(ctx, res, caller);
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
  return { view, server, reach };
}
