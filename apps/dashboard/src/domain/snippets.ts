/** The gateway proxy's port in the local stack (agentnet up). */
export const GATEWAY_PORT = 8090;

export interface AgentSnippets {
  openaiBaseUrl: string;
  anthropicBaseUrl: string;
  openai: string;
  anthropic: string;
  env: string;
}

/**
 * How to point an SDK at the gateway: the account's endpoint (or 127.0.0.1 before one exists) on
 * the proxy port; the key is the member's own agentnet token.
 */
export function agentSnippets(endpoint: string, token: string, model = "gpt-4o-mini"): AgentSnippets {
  const host = endpoint.trim() || "127.0.0.1";
  const origin = `http://${host}:${GATEWAY_PORT}`;
  const openaiBaseUrl = `${origin}/v1`;
  const anthropicBaseUrl = origin;
  const openai = [
    'import OpenAI from "openai";',
    "",
    `const client = new OpenAI({ baseURL: "${openaiBaseUrl}", apiKey: "${token}" });`,
    "const reply = await client.chat.completions.create({",
    `  model: "${model}",`,
    '  messages: [{ role: "user", content: "Hello" }],',
    "});",
  ].join("\n");
  const anthropic = [
    'import Anthropic from "@anthropic-ai/sdk";',
    "",
    `const client = new Anthropic({ baseURL: "${anthropicBaseUrl}", apiKey: "${token}" });`,
    "const reply = await client.messages.create({",
    '  model: "claude-sonnet-4-5",',
    "  max_tokens: 256,",
    '  messages: [{ role: "user", content: "Hello" }],',
    "});",
  ].join("\n");
  const env = [
    `export OPENAI_BASE_URL=${openaiBaseUrl}`,
    `export OPENAI_API_KEY=${token}`,
    `export ANTHROPIC_BASE_URL=${anthropicBaseUrl}`,
    `export ANTHROPIC_API_KEY=${token}`,
  ].join("\n");
  return { openaiBaseUrl, anthropicBaseUrl, openai, anthropic, env };
}
