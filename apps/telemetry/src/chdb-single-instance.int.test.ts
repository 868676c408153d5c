import { type ChildProcessByStdio, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { testBusEnv } from "@agentnet/testkit";
import { afterAll, describe, expect, it } from "vitest";

const MAIN = join(import.meta.dirname, "main.ts");

type Telemetry = ChildProcessByStdio<null, Readable, null>;

/** A telemetry process on chDB in `dataDir`, and its log lines as they come. */
function startTelemetry(env: Record<string, string>) {
  const child: Telemetry = spawn(
    process.execPath,
    ["--import", createRequire(import.meta.url).resolve("tsx"), MAIN],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] },
  );
  process.once("exit", () => child.kill("SIGKILL"));
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  createInterface({ input: child.stdout }).on("line", (line) => lines.push(line));
  const logged = async (text: string) => {
    for (let waited = 0; waited < 30_000; waited += 50) {
      const line = lines.find((candidate) => candidate.includes(text));
      if (line !== undefined) return line;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`telemetry did not log "${text}" in 30 s: ${lines.join("\n")}`);
  };
  return { child, exited, logged };
}

describe("telemetry on chDB is one instance", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agn-telemetry-chdb-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("says so at start, and a second one on the same data dir stops with the first one's PID", async () => {
    const env = { ...(await testBusEnv("telemetry")), CHDB_DATA_DIR: dataDir, LOG_LEVEL: "info" };
    const first = startTelemetry(env);
    try {
      expect(await first.logged("must be the only telemetry instance")).toContain("CLICKHOUSE_URL");
      await first.logged('"ready":true');

      const second = startTelemetry(env);
      expect(await second.exited).toBe(1);
      expect(await second.logged("failed to start")).toContain(
        `chDB data dir ${dataDir} is in use by another process (PID ${first.child.pid})`,
      );
    } finally {
      first.child.kill("SIGTERM");
      expect(await first.exited).toBe(0);
    }
  }, 90_000);
});
