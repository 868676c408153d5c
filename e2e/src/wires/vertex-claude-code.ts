import { type ClaudeRun, runClaude } from "../agents/claude-code";

/**
 * Runs `claude -p <prompt> --output-format json` in Vertex mode against the gateway, as a platform
 * team that buys Claude through Google Cloud points it there: `CLAUDE_CODE_USE_VERTEX` with the
 * gateway as `ANTHROPIC_VERTEX_BASE_URL`, Google auth skipped (`CLAUDE_CODE_SKIP_VERTEX_AUTH`) and
 * the agentnet token in `ANTHROPIC_AUTH_TOKEN`, which it sends as `Authorization: Bearer`.
 * Telemetry and non-essential traffic are off. The model is named (its Vertex default has no `@`
 * version).
 */
export function runClaudeOnVertex(options: {
  baseUrl: string;
  token: string;
  prompt: string;
  project: string;
  region: string;
  model: string;
  timeoutMs?: number;
}): Promise<ClaudeRun> {
  return runClaude({
    token: options.token,
    prompt: options.prompt,
    model: options.model,
    timeoutMs: options.timeoutMs,
    env: {
      CLAUDE_CODE_USE_VERTEX: "1",
      ANTHROPIC_VERTEX_BASE_URL: `${options.baseUrl}/v1`,
      CLAUDE_CODE_SKIP_VERTEX_AUTH: "1",
      ANTHROPIC_VERTEX_PROJECT_ID: options.project,
      CLOUD_ML_REGION: options.region,
    },
  });
}
