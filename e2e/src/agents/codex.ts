import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type AgentRun, runAgent } from "./agent-process";

const TARGETS: Record<string, string> = {
  "linux-x64": "x86_64-unknown-linux-musl",
  "linux-arm64": "aarch64-unknown-linux-musl",
};

/** The Codex CLI's native binary, from the platform package its npm wrapper depends on. */
function codexBinary(): string {
  const platform = `${process.platform}-${process.arch}`;
  const target = TARGETS[platform];
  if (!target) throw new Error(`no Codex binary for ${platform} in these tests`);
  const wrapper = createRequire(import.meta.url).resolve("@openai/codex/package.json");
  const vendor = dirname(createRequire(wrapper).resolve(`@openai/codex-${platform}/package.json`));
  return join(vendor, "vendor", target, "bin", "codex");
}

/**
 * Runs `codex exec --skip-git-repo-check <prompt>` with no configuration file: the key in
 * CODEX_API_KEY (Codex 0.171 no longer reads OPENAI_API_KEY or OPENAI_BASE_URL for `exec`) and the
 * gateway as the built-in OpenAI provider's base URL, given on the command line. `config` is
 * written as `~/.codex/config.toml` (CODEX_HOME's default) when given; `env` adds to its environment.
 */
export function runCodex(options: {
  baseUrl: string;
  token: string;
  prompt: string;
  model?: string;
  timeoutMs?: number;
  config?: string;
  env?: Record<string, string>;
}): Promise<AgentRun> {
  return runAgent(
    codexBinary(),
    [
      "exec",
      "--skip-git-repo-check",
      "-c",
      `openai_base_url=${options.baseUrl}/v1`,
      ...(options.model ? ["-m", options.model] : []),
      options.prompt,
    ],
    { CODEX_API_KEY: options.token, ...options.env },
    {
      timeoutMs: options.timeoutMs,
      ...(options.config === undefined ? {} : { files: { ".codex/config.toml": options.config } }),
    },
  );
}
