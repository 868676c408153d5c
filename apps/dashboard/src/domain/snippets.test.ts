import { describe, expect, it } from "vitest";
import { agentSnippets } from "./snippets";

describe("agentSnippets", () => {
  it("points both SDKs at the endpoint on the proxy port with the member's token", () => {
    const s = agentSnippets("acme.proxy.example.com", "agn_abc", "gpt-4o");
    expect(s.openaiBaseUrl).toBe("http://acme.proxy.example.com:8090/v1");
    expect(s.anthropicBaseUrl).toBe("http://acme.proxy.example.com:8090");
    expect(s.openai).toContain('apiKey: "agn_abc"');
    expect(s.openai).toContain('model: "gpt-4o"');
    expect(s.anthropic).toContain('baseURL: "http://acme.proxy.example.com:8090"');
  });

  it("uses 127.0.0.1 before an endpoint exists", () => {
    expect(agentSnippets("", "t").openaiBaseUrl).toBe("http://127.0.0.1:8090/v1");
  });
});
