import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type AgentRun, runAgent } from "../agents/agent-process";

/** Gemini CLI's entry point: the npm package's bundle, run with this node. */
function geminiEntry(): string {
  const cli = createRequire(import.meta.url).resolve("@google/gemini-cli/package.json");
  return join(dirname(cli), "bundle", "gemini.js");
}

/**
 * The settings file under HOME: the API-key auth selected (without it `-p` refuses a custom base
 * URL), usage statistics and telemetry off, no update checks.
 */
const SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true },
};

/**
 * Runs `gemini -m <model> -p <prompt>` pointed at `baseUrl` with an agentnet token as its Gemini
 * API key. The model is named: left on `auto`, the CLI first asks a flash-lite model to rate the
 * prompt's complexity and expects JSON back. The fresh HOME is its workspace, trusted by
 * `GEMINI_CLI_TRUST_WORKSPACE` (headless runs refuse an untrusted folder with exit code 55).
 */
export function runGeminiCli(options: {
  baseUrl: string;
  token: string;
  prompt: string;
  model?: string;
  /** More environment, e.g. `GEMINI_CLI_CUSTOM_HEADERS` ("Name: value, Name2: value2"). */
  env?: Record<string, string>;
  timeoutMs?: number;
}): Promise<AgentRun> {
  return runAgent(
    process.execPath,
    [geminiEntry(), "-m", options.model ?? "gemini-2.5-flash", "-p", options.prompt],
    {
      GOOGLE_GEMINI_BASE_URL: options.baseUrl,
      GEMINI_API_KEY: options.token,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      // One process: left to itself it relaunches itself as a child with a larger heap, which a
      // kill at the timeout would leave running, holding the output open.
      GEMINI_CLI_NO_RELAUNCH: "true",
      ...options.env,
    },
    { timeoutMs: options.timeoutMs, files: { ".gemini/settings.json": JSON.stringify(SETTINGS) } },
  );
}
