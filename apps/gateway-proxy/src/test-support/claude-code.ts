import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * The Claude Code CLI's native binary. The npm package's postinstall copies it over a stub, but
 * pnpm runs no dependency install scripts here, so the binary is taken from the platform package
 * the wrapper depends on.
 */
function claudeBinary(): string {
  const require = createRequire(import.meta.url);
  const wrapper = require.resolve("@anthropic-ai/claude-code/package.json");
  const platform = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
  return join(dirname(createRequire(wrapper).resolve(`${platform}/package.json`)), "claude");
}

export interface ClaudeRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** `--output-format json`'s result object, when Claude Code printed one. */
  json: { result?: string; is_error?: boolean; session_id?: string; subtype?: string } | undefined;
}

/**
 * Runs `claude -p <prompt> --output-format json` as a user would, pointed at `baseUrl` with an
 * agentnet token, in a fresh HOME (no config, no login) with telemetry and non-essential traffic
 * off. Killed after `timeoutMs`.
 */
export async function runClaude(options: {
  baseUrl: string;
  token: string;
  prompt: string;
  model?: string;
  timeoutMs?: number;
}): Promise<ClaudeRun> {
  const home = mkdtempSync(join(tmpdir(), "agn-claude-home-"));
  const args = [
    "-p",
    options.prompt,
    "--output-format",
    "json",
    ...(options.model ? ["--model", options.model] : []),
  ];
  try {
    return await new Promise<ClaudeRun>((resolve, reject) => {
      const child = spawn(claudeBinary(), args, {
        cwd: home,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: home,
          ANTHROPIC_BASE_URL: options.baseUrl,
          ANTHROPIC_AUTH_TOKEN: options.token,
          DISABLE_TELEMETRY: "1",
          DISABLE_AUTOUPDATER: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
      child.once("error", reject);
      child.once("close", (exitCode) => {
        clearTimeout(timer);
        resolve({ exitCode, stdout, stderr, json: parseResult(stdout) });
      });
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function parseResult(stdout: string): ClaudeRun["json"] {
  try {
    return JSON.parse(stdout) as ClaudeRun["json"];
  } catch {
    return undefined;
  }
}
