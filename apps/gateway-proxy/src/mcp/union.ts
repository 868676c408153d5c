import { type GatewayMcpServer, Id, type Policy } from "@agentnet/contracts";
import { isToolGranted, type McpServerReach, reachableMcpServers } from "@agentnet/gateway-rules";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import { z } from "zod";
import type { ProxyContext } from "../context";
import { isJsonObject, type JsonObject } from "../domain/json";
import { sendJson } from "../http/errors";
import { runToolCall, type ToolCallRoute } from "./call";
import { type CallerCredential, credentialMissing, isUnavailable } from "./credentials";
import { calledTool, grantedToolList } from "./grants";
import { JSON_RPC, type JsonRpcId, type JsonRpcRequest, splitJoinedRequestId } from "./jsonrpc";
import { authenticateMcp, callerCredentials, mcpAccountView } from "./relay";
import { type McpSessionOwner, openSessionId, sealSessionId } from "./session-token";
import {
  answerError,
  exchange,
  forward,
  headerOf,
  type Relay,
  readClientMessage,
  type Target,
} from "./upstream";

/**
 * `/mcp`: every MCP server the caller is granted, joined into one (docs/API.md "MCP gateway").
 * The gateway answers `initialize` itself after initializing each server, and keeps one session per
 * server inside the client's one session id, sealed as on `/mcp/{server}`. Tools are named
 * `{server}__{tool}` (split at the first `__`: server names hold no `_`), so a tool's name stays the
 * same whatever else is granted. Only tools are joined: resources, prompts and completions belong
 * to one server each, and are served on `/mcp/{server}`.
 */

/** The protocol revisions the gateway speaks, newest first: those of the current MCP SDK (1.32). */
export const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"];

/** How many pages of one server's tool list are read to join them. */
const MAX_TOOL_PAGES = 20;

/** One server of a joined session: its id, its own session id (none for a stateless server), its protocol version. */
const Member = z.object({ s: Id, u: z.string().optional(), v: z.string() });
type Member = z.infer<typeof Member>;
const Members = z.array(Member);

/** The joined session is sealed to the caller and to no server (`serverId` ""), so no server's token opens it. */
const ownerOf = (accountId: string, userId: string): McpSessionOwner => ({ accountId, userId, serverId: "" });

interface Joined {
  ctx: ProxyContext;
  req: HttpRequest;
  res: HttpAnswer;
  route: Omit<ToolCallRoute, "server" | "tool" | "relay" | "grants" | "session">;
  /** The servers the caller reaches and can call (with their credential, if the server takes one). */
  reach: McpServerReach<GatewayMcpServer, Policy>[];
  credentials: Map<string, CallerCredential>;
  /** Servers granted to the caller that take each member's own credential, which the caller has not set. */
  lacking: McpServerReach<GatewayMcpServer, Policy>[];
  /** The client's session: its sealed id and the servers in it. */
  session: { sealed: string; members: Member[] } | undefined;
  /** Aborts when the client goes away before its answer: what the gateway asks servers for it stops. */
  left: AbortSignal;
}

/**
 * How long `/mcp` waits for a server's credential (an OAuth token being minted) before leaving the
 * server out of the request: one slow token endpoint never holds up the servers that are ready.
 */
const JOINED_CREDENTIAL_WAIT_MS = 3_000;

export async function handleMcpUnion(ctx: ProxyContext, req: HttpRequest, res: HttpAnswer): Promise<void> {
  if (req.method !== "POST" && req.method !== "DELETE") {
    // No joined GET stream: what servers send outside a request reaches clients on /mcp/{server}.
    req.resume();
    answerError(res, 405, null, JSON_RPC.invalidRequest, `${req.method} is not served on /mcp`, {
      allow: "POST, DELETE",
    });
    return;
  }
  const caller = await authenticateMcp(ctx, req, res);
  if (!caller) return;
  const view = await mcpAccountView(ctx, req, res, caller);
  if (!view) {
    req.resume();
    return;
  }
  const granted = reachableMcpServers(view.snapshot.mcp_servers, view.snapshot.policies, caller.group_ids);
  const credentials = await callerCredentials(
    ctx,
    view,
    granted.map((entry) => entry.server),
    caller,
    JOINED_CREDENTIAL_WAIT_MS,
  );
  const lacks = (entry: (typeof granted)[number]) => credentials.get(entry.server.id) === "missing";
  const usable = (entry: (typeof granted)[number]) => {
    const credential = credentials.get(entry.server.id);
    if (!isUnavailable(credential)) return credential !== "missing";
    // One server without a token now never breaks the rest: it is left out of this request.
    ctx.logger.warn(
      { server: entry.server.id, reason: credential.unavailable },
      "an MCP server's credential is unavailable",
    );
    return false;
  };
  const reach = granted.filter(usable);
  const lacking = granted.filter(lacks);
  const sealed = headerOf(req, "mcp-session-id");
  let session: Joined["session"];
  if (sealed !== undefined) {
    const members = openMembers(ctx, ownerOf(caller.account_id, caller.user_id), sealed);
    if (!members) {
      req.resume();
      answerError(res, 404, null, JSON_RPC.gatewayRefusal, "session not found: initialize a new one");
      return;
    }
    session = { sealed, members };
  }
  const left = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) left.abort();
  });
  const joined: Joined = {
    ctx,
    req,
    res,
    route: { caller, view },
    reach,
    credentials,
    lacking,
    session,
    left: left.signal,
  };
  if (req.method === "DELETE") {
    req.resume();
    await everyMember(joined, (target, member) =>
      exchange(ctx, target, {
        method: "DELETE",
        upstreamSession: member.u,
        protocolVersion: member.v,
        signal: joined.left,
      }),
    );
    res.writeHead(200);
    res.end();
    return;
  }
  const read = await readClientMessage(ctx, req, res);
  if (!read) return;
  const { text, parsed } = read;
  if (parsed.kind === "notification") {
    // Every server hears the client's notifications (initialized, cancelled, roots changed).
    await everyMember(joined, (target, member) =>
      exchange(ctx, target, {
        method: "POST",
        message: parsed.message,
        upstreamSession: member.u,
        protocolVersion: member.v,
        signal: joined.left,
      }),
    );
    res.writeHead(202);
    res.end();
    return;
  }
  if (parsed.kind === "response") {
    await answerServerRequest(joined, parsed.message.id, text);
    return;
  }
  const message = parsed.message;
  switch (message.method) {
    case "initialize":
      return initialize(joined, message);
    case "ping":
      sendJson(res, 200, { jsonrpc: "2.0", id: message.id, result: {} }, sessionHeader(joined));
      return;
    case "tools/list":
      return listTools(joined, message);
    case "tools/call":
      return callTool(joined, message);
    case "server/discover":
      // The 2026-07-28 revision's discovery: a 400 makes clients fall back to `initialize`.
      answerError(
        res,
        400,
        message.id,
        JSON_RPC.methodNotFound,
        "server/discover is not supported: use initialize",
      );
      return;
    default:
      answerError(
        res,
        200,
        message.id,
        JSON_RPC.methodNotFound,
        `${message.method} is not served on /mcp, which joins the tools of every server granted to you: use /mcp/{server}`,
        sessionHeader(joined),
      );
  }
}

function openMembers(ctx: ProxyContext, owner: McpSessionOwner, sealed: string): Member[] | undefined {
  const text = openSessionId(ctx.sealingKey, owner, sealed);
  if (text === undefined) return undefined;
  try {
    const members = Members.safeParse(JSON.parse(text));
    return members.success ? members.data : undefined;
  } catch {
    return undefined;
  }
}

const sessionHeader = (joined: Joined): Record<string, string> =>
  joined.session ? { "mcp-session-id": joined.session.sealed } : {};

const targetOf = (joined: Joined, reach: McpServerReach<GatewayMcpServer, Policy>): Target => ({
  view: joined.route.view,
  server: reach.server,
  reach,
  credential: joined.credentials.get(reach.server.id),
});

/** The relay of a request to the server at `index` of the client's session. */
const relayTo = (
  joined: Joined,
  reach: McpServerReach<GatewayMcpServer, Policy>,
  member: Member,
  index: number,
): Relay => ({
  ctx: joined.ctx,
  req: joined.req,
  res: joined.res,
  caller: joined.route.caller,
  target: targetOf(joined, reach),
  owner: ownerOf(joined.route.caller.account_id, joined.route.caller.user_id),
  session:
    member.u !== undefined && joined.session
      ? { sealed: joined.session.sealed, upstream: member.u }
      : undefined,
  joined: { index, protocolVersion: member.v },
});

/**
 * Runs `work` for every server of the client's session the caller still reaches, at once; a server
 * that fails is logged and left out of the result, so one broken server never breaks the rest.
 */
async function everyMember<T>(
  joined: Joined,
  work: (target: Target, member: Member, index: number) => Promise<T>,
): Promise<{ reach: McpServerReach<GatewayMcpServer, Policy>; result: T }[]> {
  const members = joined.session?.members ?? [];
  const runs = members.map(async (member, index) => {
    const reach = joined.reach.find((entry) => entry.server.id === member.s);
    if (!reach) return undefined;
    try {
      return { reach, result: await work(targetOf(joined, reach), member, index) };
    } catch (error) {
      joined.ctx.logger.warn({ server: member.s, err: error }, "an MCP server of a joined session failed");
      return undefined;
    }
  });
  return (await Promise.all(runs)).filter((run) => run !== undefined);
}

/**
 * Initializes every server the caller reaches with the client's request and answers for all of
 * them: the newest protocol version every server and the client agreed to, tools as the one
 * capability, and a session id holding each server's session.
 */
async function initialize(joined: Joined, message: JsonRpcRequest): Promise<void> {
  const { ctx, res, route } = joined;
  const asked = typeof message.params?.protocolVersion === "string" ? message.params.protocolVersion : "";
  const offered = PROTOCOL_VERSIONS.find((version) => version <= asked) ?? PROTOCOL_VERSIONS[0] ?? asked;
  const request = { ...message, params: { ...message.params, protocolVersion: offered } };
  const initialized = await Promise.all(
    joined.reach.map(async (reach): Promise<Member | undefined> => {
      try {
        const answer = await exchange(ctx, targetOf(joined, reach), {
          method: "POST",
          message: request,
          upstreamSession: undefined,
          protocolVersion: undefined,
          signal: joined.left,
        });
        const result = answer.answer && "result" in answer.answer ? answer.answer.result : undefined;
        const version = typeof result?.protocolVersion === "string" ? result.protocolVersion : undefined;
        if (answer.status !== 200 || !version) {
          ctx.logger.warn(
            { server: reach.server.id, status: answer.status },
            "an MCP server did not initialize",
          );
          return undefined;
        }
        return { s: reach.server.id, ...(answer.session ? { u: answer.session } : {}), v: version };
      } catch (error) {
        ctx.logger.warn({ server: reach.server.id, err: error }, "an MCP server could not be initialized");
        return undefined;
      }
    }),
  );
  const members = initialized.filter((member) => member !== undefined);
  // Revisions are dates: the oldest sorts first.
  const agreed = [offered, ...members.map((member) => member.v)].sort()[0] ?? offered;
  const sealed = sealSessionId(
    ctx.sealingKey,
    ownerOf(route.caller.account_id, route.caller.user_id),
    JSON.stringify(members),
  );
  const names = members.flatMap(
    (member) => joined.reach.find((r) => r.server.id === member.s)?.server.name ?? [],
  );
  sendJson(
    res,
    200,
    {
      jsonrpc: "2.0",
      id: message.id,
      result: {
        protocolVersion: agreed,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: "agentnet-mcp-gateway", version: "1.0.0" },
        instructions: [
          `Tools of the MCP servers granted to you, named {server}__{tool}: ${names.join(", ") || "none"}.`,
          ...joined.lacking.map((entry) => `Left out: ${credentialMissing(entry.server)}.`),
        ].join(" "),
      },
    },
    { "mcp-session-id": sealed },
  );
}

/** Every server's granted tools, each named `{server}__{tool}`, in one list (no further pages). */
async function listTools(joined: Joined, message: JsonRpcRequest): Promise<void> {
  const lists = await everyMember(joined, async (target, member) => {
    const tools: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const answer = await exchange(joined.ctx, target, {
        method: "POST",
        message: { ...message, params: cursor ? { cursor } : {} },
        upstreamSession: member.u,
        protocolVersion: member.v,
        signal: joined.left,
      });
      const result = answer.answer && "result" in answer.answer ? answer.answer.result : undefined;
      if (!result) throw new Error(`tools/list answered ${answer.status}`);
      const granted = grantedToolList(result, (tool) =>
        isToolGranted(target.reach, tool, target.view.guardrails),
      );
      if (Array.isArray(granted.tools)) tools.push(...granted.tools);
      cursor =
        typeof result.nextCursor === "string" && result.nextCursor !== "" ? result.nextCursor : undefined;
      if (!cursor) break;
    }
    return tools;
  });
  const tools = lists.flatMap(({ reach, result }) =>
    result
      .filter(isJsonObject)
      .map((tool: JsonObject) => ({ ...tool, name: `${reach.server.name}__${tool.name}` })),
  );
  sendJson(joined.res, 200, { jsonrpc: "2.0", id: message.id, result: { tools } }, sessionHeader(joined));
}

/**
 * A `tools/call` of `{server}__{tool}`: the server's own name of the tool goes to that server
 * (through the same grant check and row as on `/mcp/{server}`), over the session the client's
 * session holds for it.
 */
async function callTool(joined: Joined, message: JsonRpcRequest): Promise<void> {
  const { ctx, req, res } = joined;
  const named = calledTool(message.params) ?? "";
  const split = named.indexOf("__");
  const serverName = split === -1 ? "" : named.slice(0, split);
  const tool = split === -1 ? undefined : named.slice(split + 2) || undefined;
  const members = joined.session?.members ?? [];
  const index = members.findIndex((member) =>
    joined.reach.some((reach) => reach.server.id === member.s && reach.server.name === serverName),
  );
  const member = members[index];
  const reach = member && joined.reach.find((entry) => entry.server.id === member.s);
  // A server left out for want of the caller's own credential: refused, with its row, saying so.
  const lacking = reach ? undefined : joined.lacking.find((entry) => entry.server.name === serverName);
  const rewritten = { ...message, params: { ...message.params, name: tool ?? named } };
  const text = JSON.stringify(rewritten);
  const relay = reach && member ? relayTo(joined, reach, member, index) : undefined;
  const server = reach?.server ??
    lacking?.server ?? {
      id: "",
      name: serverName || "(no server named)",
      url: "",
      price_per_call: 0,
    };
  await runToolCall(
    ctx,
    req,
    res,
    {
      ...joined.route,
      server,
      tool: serverName === "" ? named : tool,
      relay,
      grants: reach?.grants ?? lacking?.grants ?? [],
      session: joined.session ? `joined\n${joined.session.sealed}` : undefined,
      credentialMissing: lacking !== undefined,
    },
    rewritten,
    text,
  );
}

/** The client's answer to a server's request (sampling, elicitation): back to that server with its own id. */
async function answerServerRequest(joined: Joined, id: JsonRpcId | null, text: string): Promise<void> {
  const target = splitJoinedRequestId(id);
  const member = target && joined.session?.members[target.index];
  const reach = member && joined.reach.find((entry) => entry.server.id === member.s);
  if (!target || !member || !reach) {
    answerError(
      joined.res,
      400,
      id,
      JSON_RPC.invalidRequest,
      "this answers no request of a server in your session",
    );
    return;
  }
  const body = { ...(JSON.parse(text) as JsonObject), id: target.id };
  await forward(relayTo(joined, reach, member, target.index), { method: "POST", body: JSON.stringify(body) });
}
