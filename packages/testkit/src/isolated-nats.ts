import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUS_SERVICES, type BusService } from "@agentnet/contracts";
import {
  type BusCredentials,
  freePort,
  generateBusCredentials,
  natsAnswers,
  natsServerBinary,
  natsServerConfig,
  type OperatorUser,
  startProcess,
  waitUntil,
  writeNatsServerConfig,
} from "@agentnet/local-backends";
import { inject } from "vitest";
import "./provided";

export interface TestNats {
  url: string;
  /** Each service's password: services under test connect as themselves, with their permissions. */
  credentials: BusCredentials;
  /** A user with every permission, for what the test itself does on the bus. */
  operator: OperatorUser;
}

let serving: Promise<TestNats> | undefined;

/** The user a test drives the bus with: every permission, its own password per server. */
export const testOperator = (): OperatorUser => ({
  user: "test-operator",
  password: generateBusCredentials().cli,
});

/**
 * Starts a test's nats-server from `configFile`, its logs and pid file in `dir` (the run's teardown
 * reads the pid: a server left by a worker that died is killed there), and resolves once it
 * answers the operator at `url`.
 */
export async function spawnTestNats(
  name: string,
  dir: string,
  configFile: string,
  url: string,
  operator: OperatorUser,
) {
  const server = startProcess(name, natsServerBinary(), ["-c", configFile], join(dir, "logs"));
  writeFileSync(join(dir, "pid"), String(server.child.pid ?? ""));
  await waitUntil(() => natsAnswers(url, { auth: operator }), 15_000, `test nats-server ${name} at ${url}`);
  return server;
}

/**
 * A nats-server (JetStream on, authentication required, each service its own permissions) of this
 * test file alone. Services started in process join queue groups by name; on a NATS shared by test
 * files running in parallel, another file's instance (wired to its own fakes) could answer this
 * file's requests. One server per file rules that out. Started on first use, stopped when the test
 * process exits.
 */
export function isolatedNats(): Promise<TestNats> {
  serving ??= (async () => {
    const port = await freePort();
    // Inside the run's directory, so the global teardown finds and stops it even when the worker
    // was killed before its exit handler ran.
    const storeDir = mkdtempSync(join(inject("runDir"), "nats-"));
    const credentials = generateBusCredentials();
    const operator = testOperator();
    const configFile = join(storeDir, "nats-server.conf");
    writeNatsServerConfig(
      configFile,
      natsServerConfig({ host: "127.0.0.1", port, storeDir, passwords: credentials, operators: [operator] }),
    );
    const url = `nats://127.0.0.1:${port}`;
    const server = await spawnTestNats("nats-server", storeDir, configFile, url, operator);
    process.once("exit", () => {
      server.child.kill("SIGKILL");
      rmSync(storeDir, { recursive: true, force: true });
    });
    return { url, credentials, operator };
  })();
  return serving;
}

export const isolatedNatsUrl = async () => (await isolatedNats()).url;

export const isBusService = (name: string): name is BusService =>
  (BUS_SERVICES as readonly string[]).includes(name);

/**
 * The environment a service's own process needs to join this file's NATS as `service`
 * (`NATS_URL`, `NATS_USER`, `NATS_PASSWORD`).
 */
export async function testBusEnv(service: BusService): Promise<Record<string, string>> {
  const nats = await isolatedNats();
  return { NATS_URL: nats.url, NATS_USER: service, NATS_PASSWORD: nats.credentials[service] };
}
