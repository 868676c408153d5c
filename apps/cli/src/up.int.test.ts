import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { isolatedNatsUrl, TEST_SEALING_KEY, testBackends } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const cli = join(import.meta.dirname, "..", "bin", "agentnet.mjs");

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });

describe("agentnet up, end to end", () => {
  let stack: ChildProcess;
  let env: NodeJS.ProcessEnv;
  let apiUrl: string;
  const printed: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    const { mongoUrl } = testBackends();
    // This file's own NATS: the stack's durable consumers must not meet a dev stack's on the shared server.
    const natsUrl = await isolatedNatsUrl();
    env = {
      ...process.env,
      NATS_URL: natsUrl,
      MONGO_URL: mongoUrl,
      AGN_SEALING_KEY: TEST_SEALING_KEY,
      AGN_API_PORT: String(port),
      AGN_DATA_DIR: mkdtempSync(join(tmpdir(), "agentnet-e2e-")),
    };
    apiUrl = `http://127.0.0.1:${port}`;
    stack = spawn(process.execPath, [cli, "up"], { env, stdio: ["ignore", "pipe", "pipe"] });
    const errors: string[] = [];
    stack.stderr?.on("data", (chunk: Buffer) => errors.push(chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: stack.stdout ?? process.stdin }).on("line", (line) => {
        printed.push(line);
        if (line.startsWith("ready:")) resolve();
      });
      stack.once("exit", (code) =>
        reject(new Error(`agentnet up exited with ${code}: ${[...printed, ...errors].join("\n")}`)),
      );
    });
  }, 120_000);

  afterAll(async () => {
    if (stack.exitCode === null) {
      const exited = new Promise((resolve) => stack.once("exit", resolve));
      stack.kill("SIGTERM");
      await exited;
    }
  });

  it("prints one line per part with its address", () => {
    expect(printed.some((line) => /^nats\s+nats:\/\//.test(line))).toBe(true);
    expect(printed.some((line) => /^mongodb\s+mongodb:\/\//.test(line))).toBe(true);
    expect(printed.some((line) => /^control-plane\s/.test(line))).toBe(true);
    expect(printed.some((line) => /^provider-verifier\s/.test(line))).toBe(true);
    expect(printed.some((line) => /^telemetry\s+chdb /.test(line))).toBe(true);
    expect(printed).toContain(`${"api-gateway".padEnd(20)}${apiUrl}`);
  });

  it("bootstraps an account whose token reads it, and refuses a call without a token", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [cli, "bootstrap", "--email", "e2e@example.com", "--json"],
      { env },
    );
    const created = JSON.parse(stdout) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(["account_id", "token", "user_id"]);

    const withToken = await fetch(`${apiUrl}/api/accounts`, {
      headers: { authorization: `Token ${created.token}` },
    });
    expect(withToken.status).toBe(200);
    const accounts = (await withToken.json()) as { id: string }[];
    expect(accounts).toHaveLength(1);
    expect(accounts[0]?.id).toBe(created.account_id);

    const without = await fetch(`${apiUrl}/api/accounts`);
    expect(without.status).toBe(401);
    expect(await without.json()).toMatchObject({ code: 401 });
  });

  it("stops every service on SIGTERM and exits 0", async () => {
    const exited = new Promise<number | null>((resolve) => stack.once("exit", resolve));
    stack.kill("SIGTERM");
    expect(await exited).toBe(0);
    await expect(fetch(`${apiUrl}/healthz`)).rejects.toThrow();
  });
});
