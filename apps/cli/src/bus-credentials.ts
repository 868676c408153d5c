import { join } from "node:path";
import { connectBus } from "@agentnet/bus";
import { findRepoRoot, localBusCredentials } from "@agentnet/local-backends";
import type { CliEnv } from "./env";
import { runningStack } from "./stack-file";

/** Where the local stack keeps its data, logs, sealing key and bus credentials. */
export const localDataDir = (env: CliEnv) => env.AGN_DATA_DIR ?? join(findRepoRoot(), ".data");

/** The local stack's bus credentials file (mode 0600): one password per service. */
export const busCredentialsFile = (dataDir: string) => join(dataDir, "nats-credentials.json");

/**
 * The CLI joins the bus as its own user, which may only bootstrap accounts: with NATS_USER and
 * NATS_PASSWORD when set, else with the local stack's generated credentials.
 */
export function connectCli(env: CliEnv) {
  const dataDir = localDataDir(env);
  const password = env.NATS_USER ? env.NATS_PASSWORD : localBusCredentials(busCredentialsFile(dataDir)).cli;
  if (!password) throw new Error("NATS_USER is set without NATS_PASSWORD");
  return connectBus({
    url: env.NATS_USER ? env.NATS_URL : runningStack(dataDir)?.nats_urls.join(",") || env.NATS_URL,
    service: "cli",
    auth: { user: env.NATS_USER ?? "cli", password },
    timeoutMs: 5_000,
  });
}
