import { request } from "@agentnet/bus";
import { ControlPlane, type GatewayMcpServer } from "@agentnet/contracts";
import { mcpServerCredentialAad, mcpUserCredentialAad, unseal } from "@agentnet/sealing";
import { CredentialUnavailableError, type TokenFetch } from "@agentnet/vendor-auth";
import { fetch as undiciFetch } from "undici";
import type { ProxyContext } from "../context";
import type { AccountView } from "../snapshot/cache";

/** The header the gateway adds to a server's requests for one caller. */
export interface ServerCredential {
  header: string;
  value: string;
}

/**
 * What a caller's requests to a server carry: no credential, one, `missing` when the server takes
 * each member's own and the caller set none (their requests are refused, never sent without it), or
 * why none could be had now (an OAuth token endpoint that refused or failed: the proxy answers 502).
 */
export type CallerCredential = ServerCredential | undefined | "missing" | { unavailable: string };

export const isUnavailable = (credential: CallerCredential): credential is { unavailable: string } =>
  typeof credential === "object" && "unavailable" in credential;

/** The deny reason of a call refused for want of the caller's own credential. */
export const CREDENTIAL_MISSING = "mcp.credential_missing";

/** What a member without their own credential for a per-user server is told, wherever they call it. */
export const credentialMissing = (server: Pick<GatewayMcpServer, "id" | "name">) =>
  `MCP server ${server.name} is called with each member's own credential, and you have not set yours: PUT /api/agent-network/mcp-servers/${server.id}/my-credential with {"value": "..."}`;

/**
 * The credential of `server` for the caller `userId`, opened once per account snapshot (a changed
 * credential, shared or a member's own, arrives with a new snapshot). A member's own is asked of the
 * control-plane once per snapshot, and so is one found unset: a member who sets theirs changes the
 * account's configuration, so the next request finds a new snapshot and asks again. Throws when
 * the control-plane cannot be asked.
 */
export async function callerCredential(
  ctx: ProxyContext,
  view: AccountView,
  server: GatewayMcpServer,
  userId: string,
): Promise<CallerCredential> {
  const accountId = view.snapshot.account_id;
  const { credential } = server;
  if (credential.kind === "none") return undefined;
  const shared = () => {
    if (!server.sealed_credential) return undefined;
    const key = `mcp-server:${server.id}`;
    let value = view.keys.get(key);
    if (value === undefined) {
      value = unseal(ctx.sealingKey, server.sealed_credential, mcpServerCredentialAad(accountId, server.id));
      view.keys.set(key, value);
    }
    return value;
  };
  if (credential.kind === "header") {
    const value = shared();
    return value === undefined ? undefined : { header: credential.header_name, value };
  }
  if (credential.kind === "oauth_client_credentials") {
    const secret = shared();
    if (secret === undefined) return undefined;
    const grant = {
      token_url: credential.token_url,
      client_id: credential.client_id,
      client_secret: secret,
      ...(credential.scope ? { scope: credential.scope } : {}),
    };
    try {
      const pending = ctx.credentials.clientCredentials(tokenOwnerOf(server), grant, tokenFetch(ctx));
      const auth = pending instanceof Promise ? await pending : pending;
      return { header: auth.name ?? "authorization", value: auth.value ?? "" };
    } catch (error) {
      if (error instanceof CredentialUnavailableError) return { unavailable: error.message };
      throw error;
    }
  }
  const key = `mcp-user-credential:${server.id}:${userId}`;
  let value = view.keys.get(key);
  if (value === undefined) {
    if (view.unsetCredentials.has(key)) return "missing";
    const { sealed } = await request(ctx.nc, ControlPlane.mcpUserCredentialOf, {
      account_id: accountId,
      server_id: server.id,
      user_id: userId,
    });
    if (!sealed) {
      view.unsetCredentials.add(key);
      return "missing";
    }
    value = unseal(ctx.sealingKey, sealed, mcpUserCredentialAad(accountId, server.id, userId));
    view.keys.set(key, value);
  }
  return { header: credential.header_name, value };
}

/** Whose token an OAuth server's is, among everything `ctx.credentials` keeps. */
const tokenOwnerOf = (server: Pick<GatewayMcpServer, "id">) => `mcp-server:${server.id}`;

/**
 * Told the status a server answered the gateway: a 401 from a server called with an OAuth token
 * says the token is no longer good (revoked, or the server's keys rotated) though it has not
 * expired, so it is let go and the next request mints a new one.
 */
export function noteServerStatus(ctx: ProxyContext, server: GatewayMcpServer, status: number): void {
  if (status === 401 && server.credential.kind === "oauth_client_credentials") {
    ctx.credentials.forget(tokenOwnerOf(server));
  }
}

/**
 * Token requests go out through the proxy's upstream pools, so the token endpoint is reached under
 * the same rules as MCP servers and providers (private addresses refused unless allowed).
 */
const tokenFetch =
  (ctx: ProxyContext): TokenFetch =>
  (url, options) =>
    undiciFetch(url, {
      ...(options as Parameters<typeof undiciFetch>[1]),
      dispatcher: ctx.pools.get(new URL(url).origin, false).pool,
    }) as unknown as ReturnType<TokenFetch>;
