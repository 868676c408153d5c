import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUS_SERVICES, type BusService } from "@agentnet/contracts";
import {
  type BusCredentials,
  freePort,
  generateBusCredentials,
  natsAnswers,
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
    const operator = { user: "test-operator", password: generateBusCredentials().cli };
    const configFile = join(storeDir, "nats-server.conf");
    writeNatsServerConfig(
      configFile,
      natsServerConfig({ host: "127.0.0.1", port, storeDir, passwords: credentials, operators: [operator] }),
    );
    const url = `nats://127.0.0.1:${port}`;
    const server = startProcess("nats-server", "nats-server", ["-c", configFile], join(storeDir, "logs"));
    writeFileSync(join(storeDir, "pid"), String(server.child.pid ?? ""));
    process.once("exit", () => {
      server.child.kill("SIGKILL");
      rmSync(storeDir, { recursive: true, force: true });
    });
    await waitUntil(() => natsAnswers(url, { auth: operator }), 15_000, `test nats-server on port ${port}`);
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
