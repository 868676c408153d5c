import { SealedSecret } from "@agentnet/contracts";
import { SealingError, type SealingKeys, seal, unseal } from "@agentnet/sealing";

/**
 * The `Mcp-Session-Id` the gateway hands a client: the upstream server's own session id sealed
 * with AGN_SEALING_KEY to the caller and the server. Any proxy replica opens it, so a session needs
 * no shared state and survives the proxy that began it; a caller cannot use another's session (the
 * seal is bound to their account and user), and the upstream id never reaches the client, which
 * could otherwise reuse it on the server directly. Grants are checked on every request from the
 * account's configuration, never from the token.
 */
export interface McpSessionOwner {
  accountId: string;
  userId: string;
  serverId: string;
}

const PREFIX = "agn1.";

const aadOf = (owner: McpSessionOwner) => `mcp-session:${owner.accountId}:${owner.userId}:${owner.serverId}`;

export function sealSessionId(keys: SealingKeys, owner: McpSessionOwner, upstreamSessionId: string): string {
  const sealed = seal(keys, upstreamSessionId, aadOf(owner));
  return PREFIX + Buffer.from(JSON.stringify(sealed)).toString("base64url");
}

/** The upstream session id, or undefined when the token is not one this caller's session holds. */
export function openSessionId(keys: SealingKeys, owner: McpSessionOwner, token: string): string | undefined {
  if (!token.startsWith(PREFIX)) return undefined;
  let sealed: SealedSecret;
  try {
    sealed = SealedSecret.parse(JSON.parse(Buffer.from(token.slice(PREFIX.length), "base64url").toString()));
  } catch {
    return undefined;
  }
  try {
    return unseal(keys, sealed, aadOf(owner));
  } catch (error) {
    if (error instanceof SealingError) return undefined;
    throw error;
  }
}
