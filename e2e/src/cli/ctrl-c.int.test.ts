import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { identify, killProcess, type ProcessIdentity, stillRuns } from "@agentnet/cli/processes";
import { freePorts } from "@agentnet/local-backends";
import { TEST_SEALING_KEY } from "@agentnet/testkit";
import { afterAll, describe, expect, it } from "vitest";
import {
  closeTerminals,
  descendantsOf,
  expectAllGone,
  expectCtrlCStopsInOrder,
  expectStoppedInOrder,
  pollUntilGone,
  ROOT,
  readStack,
  recordedStack,
  running,
  Terminal,
} from "./terminal";

const CLI = join("apps", "cli", "bin", "agentnet.mjs");
const PARTS = [
  "nats-server",
  "ferretdb (sqlite)",
  "control-plane",
  "provider-verifier",
  "telemetry",
  "consumption",
  "gateway-proxy",
  "api-gateway",
  "demo-upstream",
];

const dataDirs: string[] = [];
const spawned: ChildProcess[] = [];

/** A fresh stack's environment: its own data directory, ports, NATS and FerretDB. */
async function stackEnv(): Promise<NodeJS.ProcessEnv> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentnet-ctrl-c-"));
  dataDirs.push(dataDir);
  const [apiPort, proxyPort, upstreamPort, natsPort, mongoPort] = await freePorts(5);
  return {
    ...process.env,
    AGN_DATA_DIR: dataDir,
    AGN_SEALING_KEY: TEST_SEALING_KEY,
    AGN_API_PORT: String(apiPort),
    AGN_PROXY_PORT: String(proxyPort),
    AGN_DEMO_UPSTREAM_PORT: String(upstreamPort),
    NATS_URL: `nats://127.0.0.1:${natsPort}`,
    MONGO_URL: `mongodb://127.0.0.1:${mongoPort}/agentnet`,
  };
}

/** `node apps/cli/bin/agentnet.mjs up` as a child of the test (no terminal), its lines collected. */
function spawnUp(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [CLI, "up"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  spawned.push(child);
  const printed: string[] = [];
  createInterface({ input: child.stdout ?? process.stdin }).on("line", (line) => printed.push(line));
  child.stderr?.on("data", (chunk: Buffer) => printed.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, printed, exited };
}

afterAll(() => {
  // A failed test leaves no stack behind: every recorded process is killed.
  for (const child of spawned) child.kill("SIGKILL");
  closeTerminals();
  for (const dataDir of dataDirs) {
    const stack = readStack(dataDir);
    for (const recorded of [...(stack ? [stack] : []), ...(stack?.processes ?? [])]) killProcess(recorded);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

describe("Ctrl-C in a terminal", () => {
  /** The data and ports of the stack stopped by Ctrl-C, which the next test starts again. */
  let env: NodeJS.ProcessEnv;

  it("while `agentnet up` starts: stops what started and exits 0", async () => {
    const startEnv = await stackEnv();
    const terminal = new Terminal(startEnv);
    terminal.type(`node ${CLI} up; echo "exit=$?"`);
    const stack = await recordedStack(startEnv, ["nats-server", "ferretdb (sqlite)", "api-gateway"]);
    const everything = [stack, ...descendantsOf(stack.pid)];
    terminal.ctrlC();

    expect((await terminal.waitFor(/exit=(\d+)/))[1]).toBe("0");
    expect(terminal.shown()).not.toContain("ready:");
    expect(terminal.shown()).toMatch(/stopping: .*\nstopped\n/);
    await expectAllGone(everything);
    expect(readStack(startEnv.AGN_DATA_DIR)).toBeUndefined();
  }, 120_000);

  it("after ready: stops every process, edges first, then the services, then the backends, and exits 0", async () => {
    env = await stackEnv();
    const terminal = new Terminal(env);
    terminal.type(`node ${CLI} up; echo "exit=$?"`);
    await terminal.waitFor(/^ready:/m);
    const stack = await recordedStack(env, PARTS);
    expect(stack.processes.map((recorded) => recorded.name).sort()).toEqual([...PARTS].sort());
    const parts = descendantsOf(stack.pid);
    // stack.json records every process `up` started (the rest below it are those processes' own).
    for (const recorded of stack.processes) expect(parts.map((found) => found.pid)).toContain(recorded.pid);

    await expectCtrlCStopsInOrder(terminal, stack);
    expect(terminal.shown()).toMatch(
      /\^Cstopping: draining the gateway proxy and the API, then the services, then the backends \(a second Ctrl-C kills everything at once\)\nstopped\nexit=0/,
    );
  }, 120_000);

  it("after `agentnet up` was killed (SIGKILL), the next one stops what it left and comes up", async () => {
    const killed = spawnUp(env);
    await expect
      .poll(() => killed.printed.some((line) => line.startsWith("ready:")), { timeout: 90_000 })
      .toBe(true);
    const stack = await recordedStack(env, PARTS);
    killed.child.kill("SIGKILL");
    await killed.exited;
    // What a killed `up` leaves: its backends at least run on, holding ports and data.
    const left = stack.processes.filter(stillRuns);
    expect(left.map((recorded) => recorded.name)).toEqual(
      expect.arrayContaining(["nats-server", "ferretdb (sqlite)"]),
    );

    const terminal = new Terminal(env);
    terminal.type(`pnpm -s agentnet up; echo "exit=$?"`);
    await terminal.waitFor(/^ready:/m);
    const leftovers = await terminal.waitFor(
      /^leftovers +stopping what the killed agentnet up \(pid (\d+)\) left running: (.*)$/m,
    );
    expect(leftovers[1]).toBe(String(stack.pid));
    for (const recorded of left) expect(leftovers[2]).toContain(`${recorded.name} (pid ${recorded.pid})`);
    expect(running(left)).toEqual([]);
    expect(terminal.shown()).toMatch(/^nats +\S+ \(started nats-server\)$/m);
    expect(terminal.shown()).toMatch(/^mongodb +\S+ \(started ferretdb \(sqlite\)\)$/m);

    // Through pnpm: the prompt comes back once the stack has stopped, not before.
    const next = await recordedStack(env, PARTS);
    const parts = descendantsOf(next.pid);
    const pnpm = terminal.job();
    expect(pnpm.map((job) => job.command)).toEqual([expect.stringMatching(/pnpm -s agentnet up$/)]);
    terminal.ctrlC();
    const goneAt = await pollUntilGone([...pnpm, ...next.processes]);

    expect((await terminal.waitFor(/exit=(\d+)/))[1]).toBe("0");
    await expectAllGone([...pnpm, ...parts]);
    expectStoppedInOrder(next, goneAt);
    expect(goneAt.get(pnpm[0]?.pid ?? 0)).toBeGreaterThanOrEqual(Math.max(...goneAt.values()));
  }, 240_000);

  it("a second Ctrl-C while the stack drains kills every process at once", async () => {
    const startEnv = await stackEnv();
    const terminal = new Terminal(startEnv);
    terminal.type(`pnpm -s agentnet up; echo "exit=$?"`);
    const stack = await recordedStack(startEnv, ["api-gateway"]);
    const apiGateway = stack.processes.find((recorded) => recorded.name === "api-gateway") as ProcessIdentity;
    // Stopped, it cannot drain: the stop waits on it for its whole grace (10 s).
    process.kill(apiGateway.pid, "SIGSTOP");
    terminal.ctrlC();
    await terminal.waitFor(/stopping: draining/);
    // pnpm passed its copy of the first Ctrl-C on to the CLI: that was not a second one.
    await new Promise((wake) => setTimeout(wake, 1_500));
    expect(stillRuns(stack)).toBe(true);
    expect(stillRuns(apiGateway)).toBe(true);
    const everything = [stack, ...descendantsOf(stack.pid)];

    const secondAt = Date.now();
    terminal.ctrlC();
    expect((await terminal.waitFor(/exit=(\d+)/))[1]).toBe("130");
    expect(Date.now() - secondAt).toBeLessThan(5_000);
    expect(terminal.shown()).toContain("stopping at once: killing every process of the stack");
    await expectAllGone(everything);
    expect(readStack(startEnv.AGN_DATA_DIR)).toBeUndefined();
  }, 120_000);

  it("a port held by a process that is not the stack's: up starts nothing and names that process", async () => {
    const startEnv = await stackEnv();
    const holder = createServer().listen(Number(startEnv.AGN_DEMO_UPSTREAM_PORT), "127.0.0.1");
    await once(holder, "listening");
    try {
      const up = spawnUp(startEnv);
      expect(await up.exited).toBe(1);
      expect(up.printed.join("\n")).toContain(
        `agentnet: port ${startEnv.AGN_DEMO_UPSTREAM_PORT} for the demo-upstream (AGN_DEMO_UPSTREAM_PORT) is taken by pid ${process.pid} (${identify(process.pid)?.command}); stop it or set AGN_DEMO_UPSTREAM_PORT`,
      );
      expect(up.printed.some((line) => line.startsWith("nats"))).toBe(false);
      expect(readStack(startEnv.AGN_DATA_DIR)).toBeUndefined();
    } finally {
      holder.close();
    }
  }, 60_000);

  it("kill -INT of the bin's pid stops the stack it starts", async () => {
    const startEnv = await stackEnv();
    const up = spawnUp(startEnv);
    const stack = await recordedStack(startEnv, ["nats-server", "ferretdb (sqlite)", "api-gateway"]);
    expect(stack.pid).toBe(up.child.pid);
    const everything = [stack, ...descendantsOf(stack.pid)];
    up.child.kill("SIGINT");
    expect(await up.exited).toBe(0);
    await expectAllGone(everything);
  }, 120_000);
});
