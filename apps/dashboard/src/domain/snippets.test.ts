import { describe, expect, it } from "vitest";
import { agentLoginSnippets, agentSnippets, maskToken, mcpSnippets } from "./snippets";

const code = (s: ReturnType<typeof agentSnippets>, id: string) =>
  s.snippets.find((snippet) => snippet.id === id)?.code;

describe("agentSnippets", () => {
  it("points every client at the endpoint on the proxy port when the dashboard is deployed", () => {
    const s = agentSnippets("acme.proxy.example.com", "agn_abc", "gpt-4o", "dashboard.example.com");
    expect(s.local).toBe(false);
    expect(s.openaiBaseUrl).toBe("http://acme.proxy.example.com:8090/v1");
    expect(s.anthropicBaseUrl).toBe("http://acme.proxy.example.com:8090");
    expect(code(s, "typescript")).toContain('apiKey: "agn_abc"');
    expect(code(s, "typescript")).toContain('model: "gpt-4o"');
    expect(code(s, "python")).toContain('base_url="http://acme.proxy.example.com:8090/v1"');
    expect(code(s, "curl")).toContain("Authorization: Bearer agn_abc");
    expect(code(s, "claude-code")).toContain("ANTHROPIC_BASE_URL=http://acme.proxy.example.com:8090");
    expect(code(s, "codex")).toContain("CODEX_API_KEY=agn_abc");
    expect(code(s, "codex")).toContain("openai_base_url=http://acme.proxy.example.com:8090/v1");
  });

  it("points Claude Code in Bedrock mode and the AWS SDK at the gateway, the token as the Bedrock API key", () => {
    const s = agentSnippets("acme.proxy.example.com", "agn_abc", "gpt-4o", "dashboard.example.com");
    expect(code(s, "claude-bedrock")).toContain(
      "ANTHROPIC_BEDROCK_BASE_URL=http://acme.proxy.example.com:8090",
    );
    expect(code(s, "claude-bedrock")).toContain("AWS_BEARER_TOKEN_BEDROCK=agn_abc");
    expect(code(s, "bedrock-sdk")).toContain('endpoint: "http://acme.proxy.example.com:8090"');
    expect(code(s, "bedrock-sdk")).toContain('token: { token: "agn_abc" }');
  });

  it("points Copilot CLI, Gemini CLI, Google's SDK, Claude Code on Vertex and the Azure SDK at the gateway", () => {
    const s = agentSnippets("acme.proxy.example.com", "agn_abc", "prod-gpt4o", "dashboard.example.com");
    expect(code(s, "copilot")).toContain("COPILOT_PROVIDER_BASE_URL=http://acme.proxy.example.com:8090/v1");
    expect(code(s, "copilot")).toContain("COPILOT_PROVIDER_API_KEY=agn_abc");
    expect(code(s, "gemini-cli")).toContain('"selectedType": "gemini-api-key"');
    expect(code(s, "gemini-cli")).toContain("GOOGLE_GEMINI_BASE_URL=http://acme.proxy.example.com:8090\n");
    expect(code(s, "gemini-cli")).toContain("GEMINI_API_KEY=agn_abc");
    expect(code(s, "google-sdk")).toContain('httpOptions: { baseUrl: "http://acme.proxy.example.com:8090" }');
    expect(code(s, "claude-vertex")).toContain("CLAUDE_CODE_USE_VERTEX=1");
    expect(code(s, "claude-vertex")).toContain(
      "ANTHROPIC_VERTEX_BASE_URL=http://acme.proxy.example.com:8090/v1",
    );
    expect(code(s, "claude-vertex")).toContain("CLAUDE_CODE_SKIP_VERTEX_AUTH=1");
    expect(code(s, "claude-vertex")).toContain("ANTHROPIC_AUTH_TOKEN=agn_abc");
    expect(code(s, "azure")).toContain('endpoint: "http://acme.proxy.example.com:8090"');
    expect(code(s, "azure")).toContain('deployment: "prod-gpt4o"');
  });

  it("uses 127.0.0.1 before an endpoint exists and while the dashboard is opened on loopback", () => {
    expect(agentSnippets("", "t").openaiBaseUrl).toBe("http://127.0.0.1:8090/v1");
    const local = agentSnippets("agn-x.gw.agentnet.local", "t", "m", "127.0.0.1");
    expect(local).toMatchObject({ local: true, anthropicBaseUrl: "http://127.0.0.1:8090" });
  });

  it("masks a token but its prefix and last four characters", () => {
    expect(maskToken("agn_0123456789abcdefghij")).toBe("agn_••••••••ghij");
  });
});

describe("mcpSnippets", () => {
  it("adds the joined /mcp to Claude Code with the token as a bearer header, and to Codex by an env var", () => {
    const [claude, codex] = mcpSnippets("http://agn-x.gw.example.com:8090", "agn_t0ken");
    expect(claude?.code).toBe(
      'claude mcp add --transport http agentnet http://agn-x.gw.example.com:8090/mcp --header "Authorization: Bearer agn_t0ken"',
    );
    expect(codex?.code).toContain('url = "http://agn-x.gw.example.com:8090/mcp"');
    expect(codex?.code).toContain('bearer_token_env_var = "AGENTNET_TOKEN"');
    expect(codex?.code).not.toContain("agn_t0ken");
  });
});

describe("agentLoginSnippets", () => {
  it("signs in against the dashboard's own origin and hands agents `agentnet token`, never a token", () => {
    const [login, claude, env] = agentLoginSnippets("https://agentnet.example.com");
    expect(login?.code).toBe("agentnet login --api https://agentnet.example.com");
    expect(JSON.parse(claude?.code ?? "")).toEqual({ apiKeyHelper: "agentnet token" });
    expect(env?.code).toBe("export OPENAI_API_KEY=$(agentnet token)");
  });
});
