/** The gateway proxy's port in the local stack (agentnet up). */
export const GATEWAY_PORT = 8090;

export interface Snippet {
  id:
    | "curl"
    | "python"
    | "typescript"
    | "claude-code"
    | "codex"
    | "copilot"
    | "gemini-cli"
    | "google-sdk"
    | "claude-vertex"
    | "claude-bedrock"
    | "bedrock-sdk"
    | "azure"
    | "mcp-claude"
    | "mcp-codex"
    | "agentnet-login"
    | "claude-helper"
    | "token-env";
  label: string;
  code: string;
}

export interface AgentSnippets {
  /** Where the snippets point: the proxy origin. */
  origin: string;
  /** True when they point at 127.0.0.1 because the account's endpoint does not resolve from here. */
  local: boolean;
  openaiBaseUrl: string;
  anthropicBaseUrl: string;
  snippets: Snippet[];
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/**
 * How to point a client at the gateway. The account's endpoint is a name DNS must send to the
 * proxy, which is true in a deployment but not on a laptop running `agentnet up`: while the
 * dashboard itself is opened on a loopback address (`pageHost`), snippets use 127.0.0.1 (the
 * proxy serves loopback Host headers to every account). The key is the member's own token.
 * OpenAI-style clients take `<origin>/v1`; Anthropic's, Google's (Gemini API) and Azure's SDKs
 * the origin, and Claude Code on Vertex `<origin>/v1`, each then calling its vendor's own paths.
 * An Azure snippet names the first model as its deployment (an Azure provider's models are its
 * deployments).
 */
export function agentSnippets(
  endpoint: string,
  token: string,
  model = "gpt-4o-mini",
  pageHost = "127.0.0.1",
): AgentSnippets {
  const local = endpoint.trim() === "" || LOOPBACK.has(pageHost);
  const origin = `http://${local ? "127.0.0.1" : endpoint.trim()}:${GATEWAY_PORT}`;
  const openaiBaseUrl = `${origin}/v1`;
  const anthropicBaseUrl = origin;
  const snippets: Snippet[] = [
    {
      id: "curl",
      label: "curl",
      code: [
        `curl -s ${openaiBaseUrl}/chat/completions \\`,
        `  -H "Authorization: Bearer ${token}" -H "content-type: application/json" \\`,
        `  -d '{"model":"${model}","messages":[{"role":"user","content":"Hello"}]}'`,
      ].join("\n"),
    },
    {
      id: "python",
      label: "Python",
      code: [
        "from openai import OpenAI",
        "",
        `client = OpenAI(base_url="${openaiBaseUrl}", api_key="${token}")`,
        `reply = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Hello"}])`,
      ].join("\n"),
    },
    {
      id: "typescript",
      label: "TypeScript",
      code: [
        'import OpenAI from "openai";',
        'import Anthropic from "@anthropic-ai/sdk";',
        "",
        `const openai = new OpenAI({ baseURL: "${openaiBaseUrl}", apiKey: "${token}" });`,
        `const anthropic = new Anthropic({ baseURL: "${anthropicBaseUrl}", apiKey: "${token}" });`,
        "const reply = await openai.chat.completions.create({",
        `  model: "${model}",`,
        '  messages: [{ role: "user", content: "Hello" }],',
        "});",
      ].join("\n"),
    },
    {
      id: "claude-code",
      label: "Claude Code",
      code: [
        `export ANTHROPIC_BASE_URL=${anthropicBaseUrl}`,
        `export ANTHROPIC_AUTH_TOKEN=${token}`,
        'claude -p "Hello"',
      ].join("\n"),
    },
    {
      id: "codex",
      label: "Codex",
      code: [
        "# Codex 0.171 reads neither OPENAI_BASE_URL nor OPENAI_API_KEY for exec",
        `export CODEX_API_KEY=${token}`,
        `codex exec -c openai_base_url=${openaiBaseUrl} "Hello"`,
      ].join("\n"),
    },
    {
      id: "copilot",
      label: "Copilot CLI",
      code: [
        "# GitHub Copilot CLI with its own provider: no GitHub login needed",
        `export COPILOT_PROVIDER_BASE_URL=${openaiBaseUrl}`,
        `export COPILOT_PROVIDER_API_KEY=${token}`,
        `export COPILOT_MODEL=${model}`,
        'copilot -p "Hello"',
      ].join("\n"),
    },
    {
      id: "gemini-cli",
      label: "Gemini CLI",
      code: [
        "# In ~/.gemini/settings.json (without it, -p refuses a custom base URL):",
        '#   { "security": { "auth": { "selectedType": "gemini-api-key" } } }',
        `export GOOGLE_GEMINI_BASE_URL=${origin}`,
        `export GEMINI_API_KEY=${token}`,
        "# -p in a workspace not trusted yet: GEMINI_CLI_TRUST_WORKSPACE=true (else it exits 55)",
        'gemini -m gemini-2.5-flash -p "Hello"',
      ].join("\n"),
    },
    {
      id: "google-sdk",
      label: "Google Gen AI SDK",
      code: [
        'import { GoogleGenAI } from "@google/genai";',
        "",
        `const ai = new GoogleGenAI({ apiKey: "${token}", httpOptions: { baseUrl: "${origin}" } });`,
        'const reply = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "Hello" });',
      ].join("\n"),
    },
    {
      id: "claude-vertex",
      label: "Claude Code on Vertex",
      code: [
        "export CLAUDE_CODE_USE_VERTEX=1",
        `export ANTHROPIC_VERTEX_BASE_URL=${origin}/v1`,
        "export CLAUDE_CODE_SKIP_VERTEX_AUTH=1",
        "# Required by Claude Code; the gateway's Vertex provider names the real project and region",
        "export ANTHROPIC_VERTEX_PROJECT_ID=my-project",
        "export CLOUD_ML_REGION=us-east5",
        `export ANTHROPIC_AUTH_TOKEN=${token}`,
        'claude --model claude-sonnet-4-5@20250929 -p "Hello"',
      ].join("\n"),
    },
    {
      id: "claude-bedrock",
      label: "Claude Code on Bedrock",
      code: [
        "export CLAUDE_CODE_USE_BEDROCK=1",
        `export ANTHROPIC_BEDROCK_BASE_URL=${origin}`,
        "# The agentnet token as the Bedrock API key; the gateway's Bedrock provider holds the AWS credentials",
        `export AWS_BEARER_TOKEN_BEDROCK=${token}`,
        "export AWS_REGION=us-east-1",
        'claude --model us.anthropic.claude-sonnet-4-5-20250929-v1:0 -p "Hello"',
      ].join("\n"),
    },
    {
      id: "bedrock-sdk",
      label: "AWS SDK (Bedrock Runtime)",
      code: [
        'import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";',
        "",
        "const client = new BedrockRuntimeClient({",
        '  region: "us-east-1",',
        `  endpoint: "${origin}",`,
        `  token: { token: "${token}" },`,
        '  authSchemePreference: ["httpBearerAuth"],',
        "});",
        "const reply = await client.send(new ConverseCommand({",
        '  modelId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",',
        '  messages: [{ role: "user", content: [{ text: "Hello" }] }],',
        "}));",
      ].join("\n"),
    },
    {
      id: "azure",
      label: "Azure OpenAI SDK",
      code: [
        'import { AzureOpenAI } from "openai";',
        "",
        "const client = new AzureOpenAI({",
        `  endpoint: "${origin}",`,
        `  apiKey: "${token}",`,
        '  apiVersion: "2024-10-21",',
        `  deployment: "${model}",`,
        "});",
        "const reply = await client.chat.completions.create({",
        `  model: "${model}",`,
        '  messages: [{ role: "user", content: "Hello" }],',
        "});",
      ].join("\n"),
    },
  ];
  return { origin, local, openaiBaseUrl, anthropicBaseUrl, snippets };
}

/** A token shown without its secret: the prefix and the last four characters. */
export const maskToken = (token: string): string =>
  token.length > 12 ? `${token.slice(0, 4)}${"•".repeat(8)}${token.slice(-4)}` : "•".repeat(token.length);

/**
 * How to add the gateway's MCP servers to a coding agent: `/mcp` joins every server granted to the
 * caller (tools named `{server}__{tool}`), with the caller's token as the bearer token. Codex reads
 * the token from an environment variable, so the snippet names one instead of holding the token.
 */
export function mcpSnippets(origin: string, token: string): Snippet[] {
  const url = `${origin}/mcp`;
  return [
    {
      id: "mcp-claude",
      label: "Claude Code",
      code: `claude mcp add --transport http agentnet ${url} --header "Authorization: Bearer ${token}"`,
    },
    {
      id: "mcp-codex",
      label: "Codex (~/.codex/config.toml)",
      code: ["[mcp_servers.agentnet]", `url = "${url}"`, 'bearer_token_env_var = "AGENTNET_TOKEN"'].join(
        "\n",
      ),
    },
  ];
}

/**
 * Short-lived tokens instead of a long-lived one in a file (docs/API.md "Agent credentials"):
 * `agentnet login` against the API this dashboard is served by (its origin, `apiOrigin`), then
 * `agentnet token` wherever an agent reads its key. Claude Code re-runs its apiKeyHelper as tokens
 * expire; other agents read the key once, so per shell or per run.
 */
export function agentLoginSnippets(apiOrigin: string): Snippet[] {
  return [
    { id: "agentnet-login", label: "Sign this machine in", code: `agentnet login --api ${apiOrigin}` },
    {
      id: "claude-helper",
      label: "Claude Code (~/.claude/settings.json)",
      code: JSON.stringify({ apiKeyHelper: "agentnet token" }, null, 2),
    },
    {
      id: "token-env",
      label: "Other agents and the SDKs",
      code: "export OPENAI_API_KEY=$(agentnet token)",
    },
  ];
}
