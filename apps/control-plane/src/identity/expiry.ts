import type { Logger } from "@agentnet/service-kit";
import type { AgentCredentialModels } from "../store/agent-credential-models";
import type { SignInModels } from "../store/sign-in-models";

/** How often expired sign-in state is dropped. */
const EVERY_MS = 3_600_000;

type ExpiringModels = Pick<SignInModels, "SignInAttempt" | "Session"> &
  Pick<AgentCredentialModels, "DeviceAuthorization" | "AgentCredential" | "AgentAccessToken">;

/**
 * Drops what has expired of sign-ins and agent credentials: attempts nobody finished, device codes
 * nobody confirmed or collected, sessions, idle agent credentials and their proxy tokens. Each is
 * refused once expired anyway (every lookup checks `expires_at`); this keeps the store from growing
 * with the ones nobody came back for. A sweep rather than TTL indexes, so it does not depend on the
 * MongoDB-wire store expiring documents (FerretDB's SQLite backend here). Answers how many it dropped.
 */
export async function dropExpiredSignIns(models: ExpiringModels, now = new Date()): Promise<number> {
  const expired = { expires_at: { $lte: now } };
  const dropped = await Promise.all([
    models.SignInAttempt.deleteMany(expired),
    models.DeviceAuthorization.deleteMany(expired),
    models.Session.deleteMany(expired),
    models.AgentAccessToken.deleteMany(expired),
    models.AgentCredential.deleteMany(expired),
  ]);
  return dropped.reduce((total, result) => total + result.deletedCount, 0);
}

/** Runs `dropExpiredSignIns` at start and then hourly. */
export function startSignInExpiry(models: ExpiringModels, logger: Logger): { stop(): void } {
  const sweep = async () => {
    try {
      const dropped = await dropExpiredSignIns(models);
      if (dropped > 0) logger.info({ dropped }, "expired sign-ins, device codes and agent tokens dropped");
    } catch (error) {
      logger.warn({ err: error }, "dropping expired sign-ins failed; tried again later");
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
