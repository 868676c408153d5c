import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type AgentRun, runAgent } from "./agent-process";

/** OpenCode's native binary, from the platform package its npm wrapper depends on. */
function opencodeBinary(): string {
  const wrapper = createRequire(import.meta.url).resolve("opencode-ai/package.json");
  const platform = `opencode-${process.platform}-${process.arch}`;
  return join(dirname(createRequire(wrapper).resolve(`${platform}/package.json`)), "bin", "opencode");
}

/**
 * Runs `opencode run <prompt>` with its Anthropic provider pointed at the gateway: the base URL in
 * the project's `opencode.json` (OpenCode has no environment variable for it), the agentnet token
 * as ANTHROPIC_API_KEY.
 */
export function runOpencode(options: {
  baseUrl: string;
  token: string;
  prompt: string;
  model: string;
  timeoutMs?: number;
}): Promise<AgentRun> {
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: { anthropic: { options: { baseURL: `${options.baseUrl}/v1` } } },
    model: `anthropic/${options.model}`,
    autoupdate: false,
  };
  return runAgent(
    opencodeBinary(),
    ["run", options.prompt],
    { ANTHROPIC_API_KEY: options.token, OPENCODE_DISABLE_AUTOUPDATE: "1" },
    { timeoutMs: options.timeoutMs, files: { "opencode.json": JSON.stringify(config) } },
  );
}
