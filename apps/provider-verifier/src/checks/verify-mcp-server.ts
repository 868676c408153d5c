import {
  AppError,
  MCP_VERIFY_REFUSALS,
  type VerifyMcpServerReply,
  type VerifyMcpServerRequest,
} from "@agentnet/contracts";
import { firstNonPublic } from "@agentnet/gateway-rules";
import { pinnedAgent } from "../dial/https";
import { sendToMcpServer } from "../dial/mcp";
import { resolveOnce } from "../dial/resolve";
import { upstreamHost } from "../domain/listing";
import { mcpRefusalForFailure, mcpRefusalForStatus, mcpResult } from "../domain/mcp-check";
import type { CheckContext } from "./context";

/** The revision the check speaks: the newest the gateway relays; servers answer the one they agree to. */
const PROTOCOL_VERSION = "2025-11-25";

/**
 * Checks an MCP server before it is stored (docs/API.md "MCP servers"): `initialize`, then
 * `tools/list`, as a client would, with the server's credential, over HTTPS to the address resolved
 * once (SSRF rules as for providers), then ends the session. Stored unverified, with nothing sent:
 * an http:// URL (the credential would travel in clear), TLS verification skipped, or a
 * non-public address. Any other failure is a 422 naming it.
 */
export async function verifyMcpServer(
  ctx: CheckContext,
  req: VerifyMcpServerRequest,
): Promise<VerifyMcpServerReply> {
  const upstream = upstreamHost(req.url);
  if (!upstream) throw mcpRefusalForFailure({ kind: "unresolvable", host: req.url, code: "EINVAL" });
  if (upstream.url.protocol !== "https:") return { outcome: "unverified", reason: "plain_http" };
  if (req.skip_tls_verification) return { outcome: "unverified", reason: "tls_verification_skipped" };
  const { host, port } = upstream;

  const signal = AbortSignal.timeout(ctx.dial.timeoutMs);
  const resolved = await resolveOnce(ctx.resolve, host, signal, ctx.dial.timeoutMs);
  if (!resolved.ok) throw mcpRefusalForFailure(resolved.failure);
  const blocked = firstNonPublic(resolved.addresses.map((a) => a.address));
  if (blocked && !ctx.allowPrivateHosts.has(host)) {
    ctx.logger.info({ host, address: blocked.address, cls: blocked.cls }, "not dialing a private address");
    return { outcome: "unverified", reason: "private_address" };
  }
  const [first] = resolved.addresses;
  if (!first) throw mcpRefusalForFailure({ kind: "unresolvable", host, code: "ENODATA" });
  const target = { host, port, resolved: first };
  const agent = pinnedAgent(target, ctx.dial);
  const path = `${upstream.url.pathname}${upstream.url.search}`;
  const baseHeaders: Record<string, string> = {
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "user-agent": "agentnet-provider-verifier",
    ...(req.credential ? { [req.credential.header_name.toLowerCase()]: req.credential.value } : {}),
  };
  let session: string | undefined;
  const send = async (message: Record<string, unknown>, expectAnswer: boolean) => {
    const headers = {
      ...baseHeaders,
      ...(session ? { "mcp-session-id": session, "mcp-protocol-version": PROTOCOL_VERSION } : {}),
    };
    const posted = await sendToMcpServer(
      agent,
      target,
      path,
      { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", ...message }) },
      ctx.dial,
      signal,
    );
    if (!posted.ok) throw mcpRefusalForFailure(posted.failure);
    const refusal = mcpRefusalForStatus(posted.status, host);
    if (refusal) throw refusal;
    session ??= posted.session;
    if (!expectAnswer) return undefined;
    const result = mcpResult(posted.contentType ?? "", posted.text ?? "", message.id as number);
    if (!result) {
      throw mcpRefusalForFailure({ kind: "bad_shape", host, why: `no answer to ${String(message.method)}` });
    }
    return result;
  };
  try {
    await send(
      {
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "agentnet-verifier", version: "1.0.0" },
        },
      },
      true,
    );
    await send({ method: "notifications/initialized" }, false);
    const listed = await send({ id: 2, method: "tools/list" }, true);
    if (!Array.isArray(listed?.tools)) {
      throw mcpRefusalForFailure({ kind: "bad_shape", host, why: "tools/list answered no tool list" });
    }
    return { outcome: "verified", tools: listed.tools.length };
  } catch (error) {
    if (
      req.credential_not_sent !== undefined &&
      error instanceof AppError &&
      error.code === MCP_VERIFY_REFUSALS.rejectedCredential
    ) {
      return { outcome: "unverified", reason: req.credential_not_sent };
    }
    throw error;
  } finally {
    if (session) {
      // Ends the check's session in the background: a slow server must not hold the reply back.
      void sendToMcpServer(
        agent,
        target,
        path,
        { method: "DELETE", headers: { ...baseHeaders, "mcp-session-id": session } },
        ctx.dial,
        AbortSignal.timeout(ctx.dial.timeoutMs),
      )
        .catch(() => undefined)
        .finally(() => void agent.destroy().catch(() => undefined));
    } else {
      void agent.destroy().catch(() => undefined);
    }
  }
}
