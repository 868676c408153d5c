import { NO_AMOUNT } from "@agentnet/caps";
import { type Caller, Events, type McpServerGrant, type Policy } from "@agentnet/contracts";
import { toolGrant } from "@agentnet/gateway-rules";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import type { ProxyContext } from "../context";
import { captured, capturePlan } from "../domain/capture";
import { sessionIdFrom } from "../domain/session";
import { sourceIp } from "../http/body";
import { requestId } from "../http/request-id";
import type { AccountView } from "../snapshot/cache";
import { admitToolCall } from "./caps";
import { CREDENTIAL_MISSING, credentialMissing } from "./credentials";
import { JSON_RPC, type JsonRpcRequest } from "./jsonrpc";
import { isCharged, type ToolCallRecord, toolCallEvent, toolCallSession } from "./tool-call";
import { answerError, forward, type Relay } from "./upstream";

const NO_COLLECTION = { enable_log_collection: false, enable_prompt_collection: false, redact_pii: false };

/** The status a tool call refused by the grants is logged with (the client gets a JSON-RPC error). */
const TOOL_REFUSED_STATUS = 403;

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
  /** The server takes each member's own credential and the caller set none: nothing is sent. */
  credentialMissing?: boolean;
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
  const verdict =
    tool === undefined || (!route.relay && !route.credentialMissing)
      ? ({ refused: "mcp.tool_not_granted" } as const)
      : toolGrant({ server, grants: route.grants }, tool, route.view.guardrails);
  const granting = "policy" in verdict ? verdict : undefined;
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
    denyReason: "refused" in verdict ? verdict.refused : route.credentialMissing ? CREDENTIAL_MISSING : "",
    status: TOOL_REFUSED_STATUS,
    requestBytes: Buffer.byteLength(text),
    responseBytes: 0,
  };
  const args = captured(JSON.stringify(message.params?.arguments ?? {}), plan);
  if (args !== undefined) record.arguments = args;
  if (granting && route.credentialMissing) {
    record.responseBytes = answerError(
      res,
      200,
      message.id,
      JSON_RPC.gatewayRefusal,
      credentialMissing(server),
      {},
      { reason: CREDENTIAL_MISSING },
    );
    publish(ctx, record);
    return;
  }
  if (!granting || !route.relay) {
    // As the MCP schema answers an unknown tool (-32602): a tool not granted is one the caller cannot see.
    const why =
      record.denyReason === "guardrail.tool_blocked" ? "a guardrail blocks it" : "no policy grants it to you";
    record.responseBytes = answerError(
      res,
      200,
      message.id,
      JSON_RPC.invalidParams,
      `Unknown tool: ${tool ?? "(none named)"}: ${why} on ${server.name}`,
      {},
      { reason: record.denyReason },
    );
    publish(ctx, record);
    return;
  }
  const admission = await admitToolCall(
    ctx,
    route.caller,
    route.view,
    granting.policy,
    server.price_per_call,
  );
  if (admission.kind === "refused") {
    record.responseBytes = answerError(
      res,
      200,
      message.id,
      JSON_RPC.gatewayRefusal,
      `${admission.message} (${admission.reason})`,
      {},
      {
        reason: admission.reason,
        ...(admission.retryAfter === undefined ? {} : { retry_after_seconds: admission.retryAfter }),
      },
    );
    record.denyReason = admission.reason;
    record.status = admission.status;
    publish(ctx, record);
    return;
  }
  const hold = admission.kind === "held" ? admission : undefined;
  if (hold) record.counters = hold.hold.counters;
  try {
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
    record.decision = "allow";
    record.denyReason = "";
    record.status = outcome.status;
    record.responseBytes = outcome.bytes;
    record.path = new URL(server.url).pathname;
  } finally {
    // Charged what its row costs: the price once the server answered, nothing otherwise.
    if (hold) ctx.leases.finish(hold.hold, isCharged(record) ? hold.amount : NO_AMOUNT);
    publish(ctx, record, hold && ctx.leases.untilStored(hold.hold));
  }
}

/** Publishes the call's one event; `stored` tells the caps leases once the stream has it. */
function publish(ctx: ProxyContext, record: ToolCallRecord, stored?: () => void): void {
  record.endedAt = Date.now();
  ctx.metrics?.toolCalled(record, (record.endedAt - record.startedAt) / 1000);
  const event = toolCallEvent(record);
  ctx.publisher.enqueue(Events.requests(event.account_id), event, event.id, undefined, stored);
}
