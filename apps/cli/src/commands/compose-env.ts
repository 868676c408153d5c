import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUS_SERVICES } from "@agentnet/contracts";
import { composePasswordVariable, localBusCredentials } from "@agentnet/local-backends";
import { busCredentialsFile, localDataDir } from "../bus-credentials";
import type { CliEnv } from "../env";
import { localSealingKey } from "../sealing-key";

const secret = () => randomBytes(24).toString("base64url");

/** The values of an env file written earlier (KEY=value lines), so passwords survive a rewrite. */
function readEnvFile(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  return Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .map((line) => /^([A-Z0-9_]+)=(.*)$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => [match[1], match[2]]),
  );
}

/**
 * `agentnet compose-env`: `<data>/compose.env` (0600) for infra/docker-compose.yml and the stack
 * that uses it: the NATS password of every service (the local stack's own, so `agentnet up` joins
 * that server), MongoDB's and ClickHouse's passwords (generated once, kept afterwards), the sealing
 * key (the local stack's, so the services in containers open what `agentnet up` stored, and the
 * other way round), and the URLs a stack on this host connects with. Returns the file's path.
 */
export function composeEnv(env: CliEnv): string {
  const dataDir = localDataDir(env);
  const file = join(dataDir, "compose.env");
  const before = readEnvFile(file);
  const credentials = localBusCredentials(busCredentialsFile(dataDir));
  const mongoPassword = before.AGN_MONGO_PASSWORD ?? secret();
  const clickhousePassword = before.AGN_CLICKHOUSE_PASSWORD ?? secret();
  const lines = [
    "# Written by `agentnet compose-env`: secrets for infra/docker-compose.yml. Keep it private.",
    ...BUS_SERVICES.map((service) => `${composePasswordVariable(service)}=${credentials[service]}`),
    `AGN_MONGO_PASSWORD=${mongoPassword}`,
    `AGN_CLICKHOUSE_PASSWORD=${clickhousePassword}`,
    `AGN_SEALING_KEY=${localSealingKey(env.AGN_SEALING_KEY, join(dataDir, "sealing.key"))}`,
    "NATS_URL=nats://127.0.0.1:4222",
    `MONGO_URL=mongodb://agentnet:${mongoPassword}@127.0.0.1:27017/agentnet?authSource=admin`,
    `CLICKHOUSE_URL=http://agentnet:${clickhousePassword}@127.0.0.1:8123`,
  ];
  writeFileSync(file, `${lines.join("\n")}\n`, { mode: 0o600 });
  return file;
}
