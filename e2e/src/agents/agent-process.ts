import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface AgentRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a coding agent's CLI as a user would, in a fresh HOME (no login; only `files`, written
 * there) that is its working directory too, with only PATH and `env` in its environment. Killed
 * after `timeoutMs`. `setup` runs the same CLI first, in the same HOME and environment, once per
 * argument list (a user's one-time configuration, such as `claude mcp add`); a failing one ends the
 * run with its own output.
 */
export async function runAgent(
  binary: string,
  args: string[],
  env: Record<string, string>,
  options: { timeoutMs?: number | undefined; files?: Record<string, string>; setup?: string[][] } = {},
): Promise<AgentRun> {
  const home = mkdtempSync(join(tmpdir(), "agn-agent-home-"));
  for (const [name, content] of Object.entries(options.files ?? {})) {
    // A name may be a path under HOME (`.gemini/settings.json`).
    mkdirSync(dirname(join(home, name)), { recursive: true });
    writeFileSync(join(home, name), content);
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  const run = (argv: string[]) =>
    spawnAgent(binary, argv, { PATH: process.env.PATH ?? "", HOME: home, ...env }, home, timeoutMs);
  try {
    for (const argv of options.setup ?? []) {
      const done = await run(argv);
      if (done.exitCode !== 0) return done;
    }
    return await run(args);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function spawnAgent(
  binary: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  timeoutMs: number,
): Promise<AgentRun> {
  return new Promise<AgentRun>((resolve, reject) => {
    const child = spawn(binary, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr });
    });
  });
}
