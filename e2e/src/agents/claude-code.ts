import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type AgentRun, runAgent } from "./agent-process";

/**
 * The Claude Code CLI's native binary. The npm package's postinstall copies it over a stub, but
 * pnpm runs no dependency install scripts here, so the binary is taken from the platform package
 * the wrapper depends on.
 */
export function claudeBinary(): string {
  const require = createRequire(import.meta.url);
  const wrapper = require.resolve("@anthropic-ai/claude-code/package.json");
  const platform = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
  return join(dirname(createRequire(wrapper).resolve(`${platform}/package.json`)), "claude");
}

export interface ClaudeRun extends AgentRun {
  /** `--output-format json`'s result object, when Claude Code printed one. */
  json: { result?: string; is_error?: boolean; session_id?: string; subtype?: string } | undefined;
}

/** A remote MCP server as a user adds it (`claude mcp add --transport http`), with its headers. */
export interface ClaudeMcpServer {
  name: string;
  url: string;
  headers: Record<string, string>;
}

/** The `claude mcp add` a user runs once for `server` (local scope: this HOME, which is the working directory). */
export const mcpAddArgs = (server: ClaudeMcpServer): string[] => [
  "mcp",
  "add",
  "--transport",
  "http",
  server.name,
  server.url,
  ...Object.entries(server.headers).flatMap(([name, value]) => ["--header", `${name}: ${value}`]),
];

/**
 * Runs `claude -p <prompt> --output-format json` with an agentnet token (sent as
 * `Authorization: Bearer`), with telemetry and non-essential traffic off: pointed at `baseUrl`
 * on Anthropic's API, or where `env` says (Vertex mode names its own base URL there). `mcpServers`
 * are added first with `claude mcp add` in the same HOME; `args` go on the run's command line.
 */
export async function runClaude(options: {
  baseUrl?: string;
  /** Absent: Claude Code finds its key itself (an `apiKeyHelper` in `files`). */
  token?: string;
  prompt: string;
  model?: string;
  timeoutMs?: number;
  env?: Record<string, string>;
  mcpServers?: ClaudeMcpServer[];
  args?: string[];
  /** Files written under its HOME first (`.claude/settings.json`). */
  files?: Record<string, string>;
}): Promise<ClaudeRun> {
  const run = await runAgent(
    claudeBinary(),
    [
      "-p",
      options.prompt,
      "--output-format",
      "json",
      ...(options.model ? ["--model", options.model] : []),
      ...(options.args ?? []),
    ],
    {
      ...(options.baseUrl ? { ANTHROPIC_BASE_URL: options.baseUrl } : {}),
      ...(options.token === undefined ? {} : { ANTHROPIC_AUTH_TOKEN: options.token }),
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      ...options.env,
    },
    {
      timeoutMs: options.timeoutMs,
      setup: (options.mcpServers ?? []).map(mcpAddArgs),
      ...(options.files ? { files: options.files } : {}),
    },
  );
  return { ...run, json: parseResult(run.stdout) };
}

function parseResult(stdout: string): ClaudeRun["json"] {
  try {
    return JSON.parse(stdout) as ClaudeRun["json"];
  } catch {
    return undefined;
  }
}
