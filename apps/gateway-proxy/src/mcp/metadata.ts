import type { TLSSocket } from "node:tls";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import { sendJson } from "../http/errors";

/** Where RFC 9728 puts a resource's metadata: this prefix, then the resource's path. */
export const PROTECTED_RESOURCE_PREFIX = "/.well-known/oauth-protected-resource";

/**
 * The origin the client reached the gateway at: the Host it sent, over TLS when its connection was
 * (or, behind a trusted load balancer, when X-Forwarded-Proto says it was).
 */
function originOf(req: HttpRequest, trustProxy: boolean): string {
  const forwarded = trustProxy
    ? String(req.headers["x-forwarded-proto"] ?? "")
        .split(",")[0]
        ?.trim()
    : "";
  const tls = forwarded ? forwarded === "https" : Boolean((req.socket as TLSSocket).encrypted);
  const host = req.headers[":authority"] ?? req.headers.host ?? "localhost";
  return `${tls ? "https" : "http"}://${String(host)}`;
}

const pathOf = (req: HttpRequest) => {
  const url = req.url ?? "/";
  const mark = url.indexOf("?");
  return mark === -1 ? url : url.slice(0, mark);
};

/** The metadata URL a 401 on an MCP endpoint points to (`WWW-Authenticate: Bearer resource_metadata=...`). */
export const protectedResourceMetadataUrl = (req: HttpRequest, trustProxy: boolean): string =>
  `${originOf(req, trustProxy)}${PROTECTED_RESOURCE_PREFIX}${pathOf(req)}`;

/**
 * RFC 9728 protected-resource metadata of an MCP endpoint (`resourcePath`, e.g. `/mcp/issues`): a
 * client that discovers authorization learns that the endpoint takes a bearer token in the
 * Authorization header. It names no authorization server: agentnet tokens are issued by the
 * agentnet API (`agentnet login`, the dashboard), so the client can only be told to send one.
 */
export function answerProtectedResourceMetadata(
  req: HttpRequest,
  res: HttpAnswer,
  resourcePath: string,
  trustProxy: boolean,
): void {
  req.resume();
  sendJson(res, 200, {
    resource: `${originOf(req, trustProxy)}${resourcePath}`,
    bearer_methods_supported: ["header"],
    resource_name: "agentnet MCP gateway",
  });
}
