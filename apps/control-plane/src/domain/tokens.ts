import { createHash, randomBytes } from "node:crypto";
import { TOKEN_PREFIX } from "@agentnet/contracts";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SECRET_LENGTH = 40;

/** A new API token: `agn_` and 40 base62 characters (about 238 bits of randomness). */
export function generateToken(): string {
  let secret = "";
  // Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
  while (secret.length < SECRET_LENGTH) {
    for (const byte of randomBytes(SECRET_LENGTH)) {
      if (byte < 248 && secret.length < SECRET_LENGTH) secret += BASE62[byte % 62];
    }
  }
  return `${TOKEN_PREFIX}${secret}`;
}

/**
 * Tokens are stored only as this hash. A fast hash is right here: the token is high-entropy
 * random, so there is nothing to brute-force, and auth stays one indexed lookup.
 */
export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** Cheap shape check before touching the store. */
export const looksLikeToken = (token: string): boolean =>
  token.startsWith(TOKEN_PREFIX) && token.length === TOKEN_PREFIX.length + SECRET_LENGTH;

export const expiresAfterDays = (days: number, now = new Date()): Date =>
  new Date(now.getTime() + days * 24 * 3600 * 1000);

/** The owner's first token, made by `agentnet bootstrap`, lives a year (NetBird's longest). */
export const BOOTSTRAP_TOKEN_DAYS = 365;
