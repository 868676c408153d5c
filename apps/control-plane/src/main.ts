import { connectServiceBus } from "@agentnet/bus";
import { parseSealingKeys } from "@agentnet/sealing";
import { runOptionsFromEnv, runService } from "@agentnet/service-kit";
import mongoose from "mongoose";
import { MONGO_CONNECTION_OPTIONS, startControlPlane } from "./app";
import { startAuditRecovery } from "./audit/recovery";
import { parseEnv } from "./env";
import { faultsFrom } from "./handlers/context";
import { startSignInExpiry } from "./identity/expiry";
import { startIdentityRecheck } from "./identity/recheck";
import { startNotifier } from "./webhooks/notifier";

const env = parseEnv(process.env);

await runService(
  { ...runOptionsFromEnv("control-plane", env), healthPort: env.HEALTH_PORT },
  async ({ logger, lifecycle, tracer, metrics }) => {
    const sealingKey = parseSealingKeys(env.AGN_SEALING_KEY);
    const connection = await mongoose.createConnection(env.MONGO_URL, MONGO_CONNECTION_OPTIONS).asPromise();
    lifecycle.onStop("mongodb", () => connection.close());
    const nc = await connectServiceBus(env, "control-plane", { lifecycle, tracer, metrics });
    const controlPlane = await startControlPlane({
      nc,
      connection,
      logger,
      sealingKey,
      verifyTimeoutMs: env.VERIFY_TIMEOUT_MS,
      faults: faultsFrom(env.AGN_FAULT_CRASH_BEFORE_AUDIT_ENTRY),
      agentTokenTtlMs: env.AGN_AGENT_TOKEN_TTL_SECONDS * 1000,
    });
    const recoverAfterMs = env.AGN_AUDIT_RECOVER_AFTER_SECONDS * 1000;
    const recovery = startAuditRecovery(controlPlane, {
      afterMs: recoverAfterMs,
      everyMs: Math.min(10_000, recoverAfterMs),
    });
    lifecycle.onStop("audit recovery", () => recovery.stop());
    const recheck = startIdentityRecheck(controlPlane, { everyMs: env.AGN_IDP_RECHECK_SECONDS * 1000 });
    lifecycle.onStop("identity recheck", () => recheck.stop());
    const expiry = startSignInExpiry(controlPlane.models, logger);
    lifecycle.onStop("sign-in expiry", () => expiry.stop());
    const notifier = await startNotifier(controlPlane, {
      allowedPrivateWebhooks: env.AGN_ALLOWED_PRIVATE_WEBHOOKS,
      attemptTimeoutMs: env.WEBHOOK_TIMEOUT_MS,
    });
    lifecycle.onStop("notifier", () => notifier.stop());
    return { nats: env.NATS_URL };
  },
);
