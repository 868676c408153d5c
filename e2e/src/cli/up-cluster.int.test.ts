import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { identify, killProcess, type ProcessIdentity, stillRuns } from "@agentnet/cli/processes";
import type { RunningStack } from "@agentnet/cli/stack-file";
import type { AccessLogEntry, AccessLogPage } from "@agentnet/contracts";
import { findRepoRoot, freePort, portIsFree } from "@agentnet/local-backends";
import { TEST_SEALING_KEY } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeTerminals, descendantsOf, expectCtrlCStopsInOrder, readStack, Terminal } from "./terminal";

const cli = join(findRepoRoot(), "apps", "cli", "bin", "agentnet.mjs");
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

/** A port with the `count - 1` ports above it free too: where a part's replicas will listen. */
async function freePortBlock(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = await freePort();
    const above = await Promise.all(
      Array.from({ length: count - 1 }, (_, index) => portIsFree("127.0.0.1", base + index + 1)),
    );
    if (above.every(Boolean)) return base;
  }
  throw new Error(`no ${count} free ports in a row`);
}

/** A cluster stack's environment: its own data, NATS and store ports, API, proxy and demo ports in a row. */
async function clusterEnv(dataDir: string): Promise<NodeJS.ProcessEnv> {
  // Two API ports, three proxy ports and the demo upstream's, in a row.
  const base = await freePortBlock(6);
  return {
    ...process.env,
    NATS_URL: `nats://127.0.0.1:${await freePortBlock(3)}`,
    MONGO_URL: `mongodb://127.0.0.1:${await freePort()}/agentnet`,
    AGN_SEALING_KEY: TEST_SEALING_KEY,
    AGN_API_PORT: String(base),
    AGN_PROXY_PORT: String(base + 2),
    AGN_DEMO_UPSTREAM_PORT: String(base + 5),
    AGN_DATA_DIR: dataDir,
  };
}

// Sixteen processes start at once on a machine whose two cores others share: generous bounds.
const START_TIMEOUT_MS = 300_000;

/**
 * `agentnet up --cluster` as a child of the test; resolves once it is ready, its lines in
 * `printed`. Not ready within `timeoutMs`: rejects with what `up` printed and what each NATS node
 * says of its routes and of its JetStream cluster (`natsDiagnosis`).
 */
async function startClusterUp(
  env: NodeJS.ProcessEnv,
  printed: string[],
  timeoutMs = START_TIMEOUT_MS - 20_000,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [cli, "up", "--cluster"], { env, stdio: ["ignore", "pipe", "pipe"] });
  child.stderr?.on("data", (chunk: Buffer) => printed.push(chunk.toString()));
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout ?? process.stdin }).on("line", (line) => {
        printed.push(line);
        if (line.startsWith("ready:")) resolve();
      });
      child.once("exit", (code) =>
        reject(new Error(`agentnet up --cluster exited with ${code}: ${printed.join("\n")}`)),
      );
      timer = setTimeout(() => {
        void natsDiagnosis(env.AGN_DATA_DIR ?? "").then((diagnosis) =>
          reject(
            new Error(
              `agentnet up --cluster not ready in ${timeoutMs / 1000} s: ${printed.join("\n")}\n${diagnosis}`,
            ),
          ),
        );
      }, timeoutMs);
    });
  } finally {
    clearTimeout(timer);
  }
  return child;
}

/** What each NATS node of the stack in `dataDir` says of its routes and its JetStream cluster. */
async function natsDiagnosis(dataDir: string): Promise<string> {
  const nodes = (readStack(dataDir)?.endpoints ?? []).filter((endpoint) => endpoint.monitor_url);
  const lines = await Promise.all(
    nodes.flatMap((node) =>
      ["/healthz", "/routez", "/jsz"].map(async (path) => {
        const url = `${node.monitor_url}${path}`;
        try {
          const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
          return `${node.name} ${path} ${response.status}: ${(await response.text()).replace(/\s+/g, " ")}`;
        } catch (error) {
          return `${node.name} ${path}: ${String(error)}`;
        }
      }),
    ),
  );
  return lines.join("\n");
}

describe("agentnet up --cluster", () => {
  let stack: ChildProcess;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  let apiUrl: string;
  let proxyUrls: string[];
  let ownerToken: string;
  let memberToken: string;
  const printed: string[] = [];
  /** Requests the proxies answered 200, each of which must become a row and count in consumption. */
  let answered = 0;
  /** What the proxies answered other than 200, said when an assertion on answers fails. */
  const refusals: string[] = [];

  const stackFile = () => readStack(dataDir) as RunningStack;
  const run = async (args: string[]) =>
    (await promisify(execFile)(process.execPath, [cli, ...args], { env })).stdout;
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${apiUrl}/api${path}`, {
      method,
      headers: { authorization: `Token ${ownerToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };
  /** One chat completion through `proxyUrl`: its status, 0 when no answer came. */
  const chat = async (proxyUrl: string) => {
    try {
      const response = await fetch(`${proxyUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${memberToken}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "hi" }] }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = await response.text();
      if (response.status === 200) {
        expect(body).toContain("agentnet demo upstream");
        answered++;
      } else refusals.push(`${proxyUrl}: ${response.status} ${body}`);
      return response.status;
    } catch {
      return 0;
    }
  };
  /** A 200 through `proxyUrl` within `timeoutMs`, asking again every half second. */
  const answeredWithin = async (proxyUrl: string, timeoutMs: number) => {
    let status = 0;
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && status !== 200; ) {
      status = await chat(proxyUrl);
      if (status !== 200) await sleep(500);
    }
    expect(status, `${proxyUrl}; refused: ${refusals.join("; ")}`).toBe(200);
  };
  /** The account's rows once telemetry has one for every answered request (or `timeoutMs` passed). */
  const rowsOnceAll = async (timeoutMs: number): Promise<AccessLogEntry[]> => {
    let rows: AccessLogEntry[] = [];
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(1_000)) {
      const page = await api<AccessLogPage>("GET", "/agent-network/access-logs?page_size=100");
      rows = page.data;
      if (rows.filter((row) => row.status_code === 200).length >= answered) break;
    }
    return rows;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "agentnet-cluster-"));
    env = await clusterEnv(dataDir);
    apiUrl = `http://127.0.0.1:${env.AGN_API_PORT}`;
    stack = await startClusterUp(env, printed);
    proxyUrls = printed.flatMap((line) => /^gateway-proxy#\d\s+(\S+)$/.exec(line)?.[1] ?? []);
  }, START_TIMEOUT_MS);

  afterAll(() => {
    // A failed test leaves nothing running: every process the stack file records is killed.
    const left = readStack(dataDir);
    for (const recorded of left ? [left, ...left.processes] : []) killProcess(recorded);
    // Kept after a failure: its logs say why.
    if (stack.exitCode === 0) rmSync(dataDir, { recursive: true, force: true });
    else stack.kill("SIGKILL");
  });

  it("starts three NATS nodes and replicas of every service, each on its own line and in its own log", () => {
    for (const node of ["nats-1", "nats-2", "nats-3"]) {
      expect(
        printed.some((line) =>
          new RegExp(`^${node}\\s+nats://127\\.0\\.0\\.1:\\d+ \\(started nats-server, cluster of 3\\)$`).test(
            line,
          ),
        ),
      ).toBe(true);
    }
    const replicas = [
      "control-plane#1",
      "control-plane#2",
      "provider-verifier#1",
      "provider-verifier#2",
      "consumption#1",
      "consumption#2",
      "gateway-proxy#1",
      "gateway-proxy#2",
      "gateway-proxy#3",
      "api-gateway#1",
      "api-gateway#2",
    ];
    for (const replica of replicas) {
      expect(
        printed.some((line) => new RegExp(`^${replica}\\s+(nats nats|http)://`).test(line)),
        replica,
      ).toBe(true);
      expect(existsSync(join(dataDir, "logs", `${replica}.log`)), replica).toBe(true);
    }
    const proxyPort = Number(env.AGN_PROXY_PORT);
    expect(proxyUrls).toEqual([0, 1, 2].map((index) => `http://127.0.0.1:${proxyPort + index}`));
    expect(printed).toContain(
      `${"telemetry".padEnd(20)}chdb ${join(dataDir, "chdb")} (one instance: chDB's files belong to one process; several telemetry instances need CLICKHOUSE_URL)`,
    );
    // Every replica lists the three nodes (a replica that exited before it was ready has a line
    // saying so before this one).
    const servers = printed.flatMap((line) => /^consumption#2\s+nats (\S+)$/.exec(line)?.[1] ?? []);
    expect(servers[0]?.split(",")).toHaveLength(3);

    const recorded = stackFile();
    expect(recorded.nats_urls).toHaveLength(3);
    expect(recorded.processes.filter((process) => process.stage === "edge")).toHaveLength(5);
    expect(recorded.processes.filter((process) => /^nats-\d$/.test(process.name))).toHaveLength(3);
  });

  it("status shows every node and every replica healthy", async () => {
    const status = JSON.parse(await run(["status", "--json"])) as {
      running: boolean;
      parts: { part: string; healthy: boolean }[];
    };
    expect(status.running).toBe(true);
    expect(status.parts.map((part) => part.part)).toEqual([
      "agentnet up",
      "nats-1",
      "nats-2",
      "nats-3",
      "api-gateway#1",
      "api-gateway#2",
      "gateway-proxy#1",
      "gateway-proxy#2",
      "gateway-proxy#3",
      "demo-upstream",
    ]);
    expect(status.parts.filter((part) => !part.healthy)).toEqual([]);
  });

  it("bootstrap and quickstart work against it; each proxy's answer comes from the demo upstream and becomes a row and consumption", async () => {
    const bootstrapped = JSON.parse(await run(["bootstrap", "--email", "cluster@example.com", "--json"])) as {
      token: string;
    };
    expect(bootstrapped.token).toMatch(/^agn_/);
    const quickstarted = JSON.parse(await run(["quickstart", "--json"])) as {
      owner_token: string;
      member_token: string;
    };
    ownerToken = quickstarted.owner_token;
    memberToken = quickstarted.member_token;
    // A token cap makes consumption keep counters for the account's users.
    await api("POST", "/agent-network/budget-rules", {
      name: "cap",
      limits: {
        token_limit: { enabled: true, group_cap: 0, user_cap: 10_000_000, window_seconds: 86_400 },
        budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
      },
    });
    // The rule reaches every proxy through the account's snapshot; each answers once it has it.
    for (const proxyUrl of proxyUrls) expect(await chat(proxyUrl)).toBe(200);

    const rows = await rowsOnceAll(60_000);
    expect(rows.filter((row) => row.status_code === 200)).toHaveLength(3);
    const tokens = rows.reduce((total, row) => total + row.input_tokens + row.output_tokens, 0);
    expect(tokens).toBeGreaterThan(0);
    const counted = async () =>
      (
        await api<{ dimension_kind: string; tokens_input: number; tokens_output: number }[]>(
          "GET",
          "/agent-network/consumption",
        )
      )
        .filter((counter) => counter.dimension_kind === "user")
        .reduce((total, counter) => total + counter.tokens_input + counter.tokens_output, 0);
    await expect.poll(counted, { timeout: 30_000, interval: 1_000 }).toBe(tokens);
  }, 180_000);

  it("kill -9 of a NATS node: every proxy answers again once its clients reconnected, and up starts the node again", async () => {
    const node = stackFile().processes.find((recorded) => recorded.name === "nats-1") as ProcessIdentity;
    process.kill(node.pid, "SIGKILL");
    const killedAt = Date.now();
    for (const proxyUrl of proxyUrls) await answeredWithin(proxyUrl, 30_000);
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    await expect
      .poll(() => printed.some((line) => /^nats-1\s+restarted: nats:\/\//.test(line)), { timeout: 60_000 })
      .toBe(true);
    const rows = await rowsOnceAll(60_000);
    expect(rows.filter((row) => row.status_code === 200)).toHaveLength(answered);
  }, 180_000);

  it("kill -9 of telemetry: requests answered while it is down get their rows once up has restarted it", async () => {
    // From a stack that serves: the NATS node's loss before may still cost capped requests a
    // consumption fail-over's seconds (docs/ARCHITECTURE.md, "Caps and consumption").
    for (const proxyUrl of proxyUrls) await answeredWithin(proxyUrl, 60_000);
    const telemetry = stackFile().processes.find(
      (recorded) => recorded.name === "telemetry",
    ) as ProcessIdentity;
    process.kill(telemetry.pid, "SIGKILL");
    const restarted = () => printed.some((line) => /^telemetry\s+restarted: /.test(line));
    const before = answered;
    for (const proxyUrl of proxyUrls) await answeredWithin(proxyUrl, 10_000);
    // Answered while it was down: up had not yet said it runs again.
    expect(restarted()).toBe(false);
    expect(answered).toBe(before + 3);
    await expect.poll(restarted, { timeout: 90_000 }).toBe(true);
    // Events the killed process had pulled and not stored come again after its consumer's ack wait.
    const rows = await rowsOnceAll(90_000);
    expect(rows.filter((row) => row.status_code === 200)).toHaveLength(answered);
  }, 240_000);

  it("SIGTERM stops every replica and every NATS node, and up exits 0", async () => {
    const recorded = stackFile();
    const everything = [identify(stack.pid ?? 0) as ProcessIdentity, ...descendantsOf(stack.pid ?? 0)];
    expect(everything.length).toBeGreaterThanOrEqual(recorded.processes.length);
    const exited = new Promise<number | null>((resolve) => stack.once("exit", resolve));
    stack.kill("SIGTERM");
    expect(await exited).toBe(0);
    await expect
      .poll(() => everything.filter(stillRuns).map((process) => process.command), { timeout: 5_000 })
      .toEqual([]);
    expect(printed.at(-1)).toBe("stopped");
    expect(existsSync(join(dataDir, "stack.json"))).toBe(false);
  }, 120_000);
});

describe("agentnet up --cluster, Ctrl-C in a terminal", () => {
  let dataDir: string;

  afterAll(() => {
    closeTerminals();
    const left = readStack(dataDir);
    for (const recorded of left ? [left, ...left.processes] : []) killProcess(recorded);
    // Kept when the stack did not stop by itself: its logs and the terminal's transcript say why.
    if (!left) rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    "after a killed up --cluster (SIGKILL), the next one stops the nodes and replicas it left, comes up, and Ctrl-C stops it in stage order",
    async () => {
      dataDir = mkdtempSync(join(tmpdir(), "agentnet-cluster-ctrl-c-"));
      const env = await clusterEnv(dataDir);
      const killed = await startClusterUp(env, []);
      const first = readStack(dataDir) as RunningStack;
      killed.kill("SIGKILL");
      await new Promise((resolve) => killed.once("exit", resolve));
      // What a killed `up` leaves: the NATS nodes at least run on, holding ports and data.
      const left = first.processes.filter(stillRuns);
      expect(left.map((recorded) => recorded.name)).toEqual(
        expect.arrayContaining(["nats-1", "nats-2", "nats-3", "ferretdb (sqlite)"]),
      );

      const terminal = new Terminal(env);
      terminal.type(`node ${join("apps", "cli", "bin", "agentnet.mjs")} up --cluster; echo "exit=$?"`);
      await terminal.waitFor(/^ready:/m, START_TIMEOUT_MS);
      const leftovers = await terminal.waitFor(
        /^leftovers +stopping what the killed agentnet up \(pid (\d+)\) left running: (.*)$/m,
      );
      expect(leftovers[1]).toBe(String(first.pid));
      // The backends write their logs to files and run on; a service may have died of its broken
      // pipe to the killed `up` meanwhile, and only what still ran is named.
      const named = [...(leftovers[2] ?? "").matchAll(/([^,]+?) \(pid (\d+)\)/g)].map(
        ([, name, pid]) => `${name?.trim()} (pid ${pid})`,
      );
      const backends = left.filter((recorded) => /^nats-\d$|^ferretdb/.test(recorded.name));
      expect(named).toEqual(
        expect.arrayContaining(backends.map((recorded) => `${recorded.name} (pid ${recorded.pid})`)),
      );
      expect(left.map((recorded) => `${recorded.name} (pid ${recorded.pid})`)).toEqual(
        expect.arrayContaining(named),
      );
      expect(left.filter(stillRuns)).toEqual([]);
      const stack = readStack(dataDir) as RunningStack;
      // Three nodes, the store, twelve service processes and the demo upstream.
      expect(stack.processes).toHaveLength(17);
      await expectCtrlCStopsInOrder(terminal, stack);
    },
    2 * START_TIMEOUT_MS,
  );
});
