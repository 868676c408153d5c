import { createHash } from "node:crypto";
import { looksLikeToken } from "@agentnet/contracts";

/**
 * Tokens are stored only as this hash, and only the hash travels on the bus: the edge that received
 * the token hashes it. A fast hash is right here: the token is high-entropy random, so there is
 * nothing to brute-force, and auth stays one indexed lookup.
 */
export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** What the control-plane's token resolve is asked: the hash of a well-formed token, else undefined. */
export const tokenResolveRequest = (token: string): { token_hash: string } | undefined =>
  looksLikeToken(token) ? { token_hash: hashToken(token) } : undefined;
