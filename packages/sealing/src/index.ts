import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { SealedSecret } from "@agentnet/contracts";

export { SealedSecret } from "@agentnet/contracts";

interface SealingKey {
  readonly kid: string;
  readonly bytes: Buffer;
}

/**
 * A key ring: `current` seals, any key of `all` opens what it sealed (found by the envelope's key
 * id). Rotation: put the new key first, keep the old ones after it, re-seal (`agentnet reseal`),
 * then drop the old ones.
 */
export interface SealingKeys {
  readonly current: SealingKey;
  readonly all: readonly SealingKey[];
}

const KEY_BYTES = 32;

/**
 * Reads the sealing keys: one or more keys separated by commas, newest first, each 32 bytes as
 * base64 (or 64 hex characters). A missing or malformed key is a startup error, because every
 * stored credential depends on them.
 */
export function parseSealingKeys(text: string | undefined): SealingKeys {
  if (!text?.trim())
    throw new Error(
      "AGN_SEALING_KEY is not set: provide 32 random bytes, base64-encoded (openssl rand -base64 32)",
    );
  const all = text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map(parseOneKey);
  const [current] = all;
  if (!current) throw new Error("AGN_SEALING_KEY holds no key");
  return { current, all };
}

function parseOneKey(trimmed: string): SealingKey {
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, "hex")
    : Buffer.from(trimmed, "base64");
  if (bytes.length !== KEY_BYTES) {
    throw new Error(
      `AGN_SEALING_KEY must decode to ${KEY_BYTES} bytes (base64 or hex); it decodes to ${bytes.length}`,
    );
  }
  return { bytes, kid: createHash("sha256").update(bytes).digest("hex").slice(0, 12) };
}

export const generateSealingKey = (): string => randomBytes(KEY_BYTES).toString("base64");

/** `aad` binds the ciphertext to its owner (e.g. account and provider id): a sealed key moved to another record will not open. */
export function seal(keys: SealingKeys, plaintext: string, aad: string): SealedSecret {
  const key = keys.current;
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key.bytes, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return {
    v: 1,
    kid: key.kid,
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ct: ct.toString("base64"),
  };
}

export class SealingError extends Error {
  override readonly name = "SealingError";
}

export function unseal(keys: SealingKeys, sealed: SealedSecret, aad: string): string {
  const key = keys.all.find((candidate) => candidate.kid === sealed.kid);
  if (!key) {
    throw new SealingError(
      `secret was sealed with key ${sealed.kid}, but the configured keys are ${keys.all.map((k) => k.kid).join(", ")}`,
    );
  }
  try {
    const decipher = createDecipheriv("aes-256-gcm", key.bytes, Buffer.from(sealed.iv, "base64"));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ct, "base64")), decipher.final()]).toString(
      "utf8",
    );
  } catch {
    throw new SealingError("secret could not be unsealed: wrong key or tampered record");
  }
}

/** The owner a provider credential is sealed to: the control-plane seals with it, the proxy opens with it. */
export const providerCredentialAad = (accountId: string, providerId: string): string =>
  `provider:${accountId}:${providerId}`;

/** The owner an MCP server's credential is sealed to: the control-plane seals with it, the proxy opens with it. */
export const mcpServerCredentialAad = (accountId: string, serverId: string): string =>
  `mcp-server:${accountId}:${serverId}`;

/** The owner an account's identity provider client secret is sealed to: only the control-plane opens it. */
export const identityProviderSecretAad = (accountId: string): string => `identity-provider:${accountId}`;

/** The owner a user's refresh token at the identity provider is sealed to: only the control-plane opens it. */
export const identityGrantAad = (accountId: string, userId: string): string =>
  `identity-grant:${accountId}:${userId}`;

/**
 * The owner a member's own credential for a per-user MCP server is sealed to: one member of one
 * server of one account, so a sealed value copied to another member's record does not open.
 */
export const mcpUserCredentialAad = (accountId: string, serverId: string, userId: string): string =>
  `mcp-user-credential:${accountId}:${serverId}:${userId}`;
