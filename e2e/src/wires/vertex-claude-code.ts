import { runAgent } from "../agents/agent-process";
import { type ClaudeRun, claudeBinary } from "../agents/claude-code";

/**
 * Runs `claude -p <prompt> --output-format json` in Vertex mode against the gateway, as a platform
 * team that buys Claude through Google Cloud points it there: `CLAUDE_CODE_USE_VERTEX` with the
 * gateway as `ANTHROPIC_VERTEX_BASE_URL`, Google auth skipped (`CLAUDE_CODE_SKIP_VERTEX_AUTH`) and
 * the agentnet token in `ANTHROPIC_AUTH_TOKEN`, which it sends as `Authorization: Bearer`.
 * Telemetry and non-essential traffic are off. The model is named (its Vertex default has no `@`
 * version).
 */
export async function runClaudeOnVertex(options: {
  baseUrl: string;
  token: string;
  prompt: string;
  project: string;
  region: string;
  model: string;
  timeoutMs?: number;
}): Promise<ClaudeRun> {
  const run = await runAgent(
    claudeBinary(),
    ["-p", options.prompt, "--output-format", "json", "--model", options.model],
    {
      CLAUDE_CODE_USE_VERTEX: "1",
      ANTHROPIC_VERTEX_BASE_URL: `${options.baseUrl}/v1`,
      CLAUDE_CODE_SKIP_VERTEX_AUTH: "1",
      ANTHROPIC_VERTEX_PROJECT_ID: options.project,
      CLOUD_ML_REGION: options.region,
      ANTHROPIC_AUTH_TOKEN: options.token,
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    },
    { timeoutMs: options.timeoutMs },
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
