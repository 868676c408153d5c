import { createRequire } from "node:module";
import { type AgentRun, runAgent } from "../agents/agent-process";

/**
 * GitHub Copilot CLI's native binary, from the platform package its npm wrapper depends on (the
 * wrapper only finds and runs it). It carries its JavaScript inside and unpacks it under
 * `~/.cache/copilot` on its first run.
 */
function copilotBinary(): string {
  const wrapper = createRequire(import.meta.url).resolve("@github/copilot/package.json");
  return createRequire(wrapper).resolve(`@github/copilot-${process.platform}-${process.arch}`);
}

/**
 * Runs `copilot -p <prompt>` in its bring-your-own-key mode, which needs no GitHub login: the
 * gateway as `COPILOT_PROVIDER_BASE_URL` (`<gateway>/v1` for the default "openai" type; the bare
 * gateway for type "azure", which then calls `/openai/v1/…` with an `api-key` header), the agentnet
 * token as `COPILOT_PROVIDER_API_KEY` and the model in `COPILOT_MODEL`. No update check or download
 * (`COPILOT_AUTO_UPDATE=false`) and offline mode (`COPILOT_OFFLINE`: nothing but the provider is
 * called).
 */
export function runCopilot(options: {
  baseUrl: string;
  token: string;
  prompt: string;
  model: string;
  /** More environment, e.g. `COPILOT_PROVIDER_TYPE`. */
  env?: Record<string, string>;
  timeoutMs?: number;
}): Promise<AgentRun> {
  return runAgent(
    copilotBinary(),
    ["-p", options.prompt],
    {
      COPILOT_PROVIDER_BASE_URL: options.baseUrl,
      COPILOT_PROVIDER_API_KEY: options.token,
      COPILOT_MODEL: options.model,
      COPILOT_AUTO_UPDATE: "false",
      COPILOT_OFFLINE: "true",
      ...options.env,
    },
    { timeoutMs: options.timeoutMs },
  );
}
