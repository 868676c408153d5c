import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnv } from "../env";
import { composeEnv } from "./compose-env";

const values = (file: string) =>
  Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => /^[A-Z]/.test(line))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );

describe("agentnet compose-env", () => {
  it("writes every password once, private, with the stack's own NATS passwords", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agn-compose-env-"));
    const env = parseEnv({ AGN_DATA_DIR: dataDir });
    const file = composeEnv(env);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const first = values(file);
    const credentials = JSON.parse(readFileSync(join(dataDir, "nats-credentials.json"), "utf8"));
    expect(first.NATS_PASSWORD_GATEWAY_PROXY).toBe(credentials["gateway-proxy"]);
    expect(first.AGN_MONGO_PASSWORD).toMatch(/^[\w-]{32}$/);
    expect(first.MONGO_URL).toContain(`agentnet:${first.AGN_MONGO_PASSWORD}@127.0.0.1:27017`);
    expect(first.CLICKHOUSE_URL).toContain(`agentnet:${first.AGN_CLICKHOUSE_PASSWORD}@127.0.0.1:8123`);
    // A second run keeps the databases' passwords: their volumes were initialised with them.
    expect(values(composeEnv(env))).toEqual(first);
  });
});
