import { randomBytes } from "node:crypto";
import { TOKEN_PREFIX, TOKEN_SECRET_LENGTH } from "@agentnet/contracts";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A new API token: `agn_` and 40 base62 characters (about 238 bits of randomness). */
export function generateToken(): string {
  let secret = "";
  // Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
  while (secret.length < TOKEN_SECRET_LENGTH) {
    for (const byte of randomBytes(TOKEN_SECRET_LENGTH)) {
      if (byte < 248 && secret.length < TOKEN_SECRET_LENGTH) secret += BASE62[byte % 62];
    }
  }
  return `${TOKEN_PREFIX}${secret}`;
}

export const expiresAfterDays = (days: number, now = new Date()): Date =>
  new Date(now.getTime() + days * 24 * 3600 * 1000);

/** The owner's first token, made by `agentnet bootstrap`, lives a year (NetBird's longest). */
export const BOOTSTRAP_TOKEN_DAYS = 365;
