import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure } from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** What a member could add to a request by hand, hoping the vendor acts on it. */
const SMUGGLED = {
  cookie: "session=member",
  "openai-organization": "org-the-member-picked",
  "openai-project": "proj_the-member-picked",
  "x-forwarded-for": "203.0.113.9",
  forwarded: "for=203.0.113.9",
  "x-real-ip": "203.0.113.9",
  "x-goog-user-project": "someone-elses-project",
  "x-stainless-os": "Linux",
  "session-id": "member-session",
};

const post = (url: string, token: string, headers: Record<string, string>, body: unknown) =>
  fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

describe("the vendor gets only what it needs of a caller's request", () => {
  it("OpenAI: no cookie, organization, project, forwarding chain or query string of the member's; the provider's organization", async () => {
    const account = await stack.newAccount();
    const provider = account.openaiProvider;
    await account.must(
      stack.api("PUT", `/agent-network/providers/${provider.id}`, account.token, {
        provider_id: provider.provider_id,
        name: provider.name,
        upstream_url: provider.upstream_url,
        extra_values: { "OpenAI-Organization": "org-the-admin-set" },
      }),
    );
    await configure(stack, account).policy([provider.id]);
    const response = await post(
      `${stack.proxy.url}/v1/chat/completions?organization=org-x&api-version=2024-10-21`,
      account.token,
      { ...SMUGGLED, accept: "application/json", "user-agent": "agent/1.0", "openai-beta": "assistants=v2" },
      { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
    );
    expect(response.status).toBe(200);

    const seen = stack.openai.last;
    expect(seen?.query).toBe("");
    expect(seen?.headers).toMatchObject({
      accept: "application/json",
      "user-agent": "agent/1.0",
      "openai-beta": "assistants=v2",
      "openai-organization": "org-the-admin-set",
      authorization: "Bearer sk-upstream-openai",
      "x-caller": account.owner.email,
    });
    for (const name of Object.keys(SMUGGLED).filter((name) => name !== "openai-organization")) {
      expect(seen?.headers[name], name).toBeUndefined();
    }
  });

  it("Anthropic: the version and betas Claude Code sends, and its beta flag, but nothing smuggled", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.anthropicProvider.id]);
    const response = await post(
      `${stack.proxy.url}/v1/messages?beta=true&debug=1`,
      account.token,
      {
        ...SMUGGLED,
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
        "anthropic-dangerous-direct-browser-access": "true",
      },
      { model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: "hi" }] },
    );
    expect(response.status).toBe(200);

    const seen = stack.anthropic.last;
    expect(seen?.query).toBe("beta=true");
    expect(seen?.headers).toMatchObject({
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
      "x-api-key": "sk-ant-upstream",
    });
    expect(seen?.headers.authorization).toBeUndefined();
    expect(seen?.headers["anthropic-dangerous-direct-browser-access"]).toBeUndefined();
    for (const name of Object.keys(SMUGGLED)) expect(seen?.headers[name], name).toBeUndefined();
  });
});
