import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUS_SERVICES } from "@agentnet/contracts";
import { composePasswordVariable, findRepoRoot } from "@agentnet/local-backends";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
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
  it("writes every password once, private, with the stack's own NATS passwords and sealing key", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agn-compose-env-"));
    const env = parseEnv({ AGN_DATA_DIR: dataDir });
    const file = composeEnv(env);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const first = values(file);
    const credentials = JSON.parse(readFileSync(join(dataDir, "nats-credentials.json"), "utf8"));
    expect(first.NATS_PASSWORD_GATEWAY_PROXY).toBe(credentials["gateway-proxy"]);
    expect(first.AGN_SEALING_KEY).toBe(readFileSync(join(dataDir, "sealing.key"), "utf8").trim());
    expect(first.AGN_MONGO_PASSWORD).toMatch(/^[\w-]{32}$/);
    expect(first.MONGO_URL).toContain(`agentnet:${first.AGN_MONGO_PASSWORD}@127.0.0.1:27017`);
    expect(first.CLICKHOUSE_URL).toContain(`agentnet:${first.AGN_CLICKHOUSE_PASSWORD}@127.0.0.1:8123`);
    // A second run keeps the databases' passwords: their volumes were initialised with them.
    expect(values(composeEnv(env))).toEqual(first);
  });

  it("writes the sealing key AGN_SEALING_KEY names, so the containers open what that stack sealed", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agn-compose-env-"));
    const key = "dGVzdC1vbmx5LXNlYWxpbmcta2V5LTMyLWJ5dGVzISE=";
    const file = composeEnv(parseEnv({ AGN_DATA_DIR: dataDir, AGN_SEALING_KEY: key }));
    expect(values(file).AGN_SEALING_KEY).toBe(key);
  });
});

interface ComposeService {
  profiles?: string[];
  build?: { context: string; target: string };
  ports?: string[];
  environment?: Record<string, string>;
}

const root = findRepoRoot();
const composeText = readFileSync(join(root, "infra", "docker-compose.yml"), "utf8");
/** The services agentnet runs: every bus user but the CLI's. */
const stackServices = BUS_SERVICES.filter((service) => service !== "cli");
const backends = ["nats", "mongo", "clickhouse"];

/** A `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `${NAME:?message}` or `${NAME?message}`. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g;

/** What `docker compose --env-file` makes of the file: every reference replaced as compose does. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(REFERENCE, (_, name: string, operator: string | undefined, operand: string) => {
    const value = env[name];
    const unset = operator?.startsWith(":") ? value === undefined || value === "" : value === undefined;
    if (!unset) return value ?? "";
    if (operator?.endsWith("-")) return operand;
    throw new Error(`\${${name}} is not set: ${operand || "no default"}`);
  });
}

/** The compose file as `docker compose --env-file .data/compose.env` reads it. */
function composeWithEnv(): { env: Record<string, string>; services: Record<string, ComposeService> } {
  const dataDir = mkdtempSync(join(tmpdir(), "agn-compose-file-"));
  const env = values(composeEnv(parseEnv({ AGN_DATA_DIR: dataDir })));
  const parsed = parse(interpolate(composeText, env), { merge: true }) as {
    services: Record<string, ComposeService>;
  };
  return { env, services: parsed.services };
}

describe("infra/docker-compose.yml", () => {
  it("needs no variable but those compose-env writes; the rest have defaults", () => {
    const { env } = composeWithEnv();
    const required = [...composeText.matchAll(REFERENCE)]
      .filter(([, , operator]) => !operator?.endsWith("-"))
      .map(([, name]) => name);
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) expect(env, `\${${name}}`).toHaveProperty(name as string);
  });

  it("publishes every port on 127.0.0.1 only", () => {
    const ports = Object.values(composeWithEnv().services).flatMap((service) => service.ports ?? []);
    expect(ports).toEqual([
      "127.0.0.1:4222:4222",
      "127.0.0.1:27017:27017",
      "127.0.0.1:8123:8123",
      "127.0.0.1:8090:8090",
      "127.0.0.1:8080:8080",
    ]);
  });

  it("runs the backends alone by default and every service with the stack profile, each built from its Dockerfile target", () => {
    const { services } = composeWithEnv();
    expect(Object.keys(services).sort()).toEqual([...backends, ...stackServices].sort());
    for (const backend of backends) expect(services[backend]?.profiles, backend).toBeUndefined();
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    for (const name of stackServices) {
      expect(services[name]?.profiles, name).toEqual(["stack"]);
      expect(services[name]?.build, name).toEqual({ context: "..", target: name });
      expect(dockerfile, name).toMatch(new RegExp(`^FROM runtime AS ${name}$`, "m"));
    }
  });

  it("lets each service join NATS as its own user, with the password the NATS server reads for it", () => {
    const { services } = composeWithEnv();
    const nats = services.nats?.environment ?? {};
    for (const name of stackServices) {
      const environment = services[name]?.environment ?? {};
      expect(environment.NATS_URL, name).toBe("nats://nats:4222");
      expect(environment.NATS_USER, name).toBe(name);
      expect(environment.NATS_PASSWORD, name).toBe(nats[composePasswordVariable(name)]);
    }
  });

  it("gives the services the logins the databases are set up with and one sealing key", () => {
    const { env, services } = composeWithEnv();
    const mongoPassword = services.mongo?.environment?.MONGO_INITDB_ROOT_PASSWORD;
    expect(mongoPassword).toBe(env.AGN_MONGO_PASSWORD);
    for (const name of ["control-plane", "consumption"]) {
      expect(services[name]?.environment?.MONGO_URL, name).toBe(
        `mongodb://agentnet:${mongoPassword}@mongo:27017/agentnet?authSource=admin`,
      );
    }
    const telemetry = services.telemetry?.environment ?? {};
    const clickhouse = services.clickhouse?.environment ?? {};
    expect(telemetry).toMatchObject({
      CLICKHOUSE_URL: "http://clickhouse:8123",
      CLICKHOUSE_USER: clickhouse.CLICKHOUSE_USER,
      CLICKHOUSE_PASSWORD: clickhouse.CLICKHOUSE_PASSWORD,
    });
    for (const name of ["control-plane", "gateway-proxy"]) {
      expect(services[name]?.environment?.AGN_SEALING_KEY, name).toBe(env.AGN_SEALING_KEY);
    }
  });
});

describe("the Dockerfile", () => {
  it("installs the pnpm version package.json pins", () => {
    const pinned = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).packageManager.split("@")[1];
    expect(readFileSync(join(root, "Dockerfile"), "utf8")).toContain(`ARG PNPM_VERSION=${pinned}\n`);
  });
});
