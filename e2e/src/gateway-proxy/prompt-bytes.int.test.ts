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

/**
 * A prompt as an agent sends one, with what re-serialising a body would change: whitespace, a
 * tool schema whose property names are integer-like (JSON.stringify puts them first), an integer
 * beyond 2^53, escapes, and cache breakpoints. Vendors' prompt caches match on the prompt as sent.
 */
const TOOLS =
  '[{"name":"pick","description":"caf\\u00e9 \\/ menu","input_schema":{"type":"object","properties":{"b":{"type":"string"},"10":{"type":"integer"},"2":{"type":"integer"}}},"cache_control":{"type":"ephemeral"}}]';

const send = (path: string, token: string, text: string, headers: Record<string, string> = {}) =>
  fetch(`${stack.proxy.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: text,
  });

describe("prompt caching survives the proxy: the vendor gets the caller's bytes but for the documented edits", () => {
  it("Anthropic: the body as sent, with the caller's id in metadata.user_id appended", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.anthropicProvider.id]);
    const sent = `{
  "model": "claude-sonnet-4-5",
  "max_tokens": 64,
  "seed_like": 123456789012345678901,
  "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
  "tools": ${TOOLS},
  "messages": [{"role": "user", "content": [{"type": "text", "text": "h\\u00e9llo", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]
}`;
    const response = await send("/v1/messages", account.token, sent, { "anthropic-version": "2023-06-01" });
    expect(response.status).toBe(200);
    const userId = JSON.stringify(account.owner.user_id);
    expect(stack.anthropic.last?.text).toBe(`${sent.slice(0, -2)},"metadata":{"user_id":${userId}}\n}`);
  });

  it("Anthropic: a caller's own metadata is replaced where it stood; the members around it keep their bytes", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.anthropicProvider.id]);
    const sent = `{"model":"claude-sonnet-4-5","metadata":{"user_id":"someone-else"},"max_tokens":64,"tools":${TOOLS},"messages":[{"role":"user","content":"hi"}]}`;
    const response = await send("/v1/messages", account.token, sent, { "anthropic-version": "2023-06-01" });
    expect(response.status).toBe(200);
    expect(stack.anthropic.last?.text).toBe(
      sent.replace('"someone-else"', JSON.stringify(account.owner.user_id)),
    );
  });

  it("OpenAI chat, streamed: the body as sent, with the caller's user and the usage request appended", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const sent = `{"model": "gpt-4o", "stream": true, "tools": ${TOOLS}, "messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "h\\u00e9llo"}], "seed": 123456789012345678901}`;
    const response = await send("/v1/chat/completions", account.token, sent);
    expect(response.status).toBe(200);
    await response.text();
    const seen = stack.openai.last;
    expect(seen?.body.user).toBe(account.owner.user_id);
    expect(seen?.text).toBe(
      `${sent.slice(0, -1)},"user":${JSON.stringify(account.owner.user_id)},"stream_options":{"include_usage":true}}`,
    );
  });

  it("OpenAI Responses: the body as sent, with the caller's user appended", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const sent = `{"model":"gpt-4o","input":[{"role":"user","content":"h\\u00e9llo"}],"tools":${TOOLS},"prompt_cache_key":"k-1"}`;
    const response = await send("/v1/responses", account.token, sent);
    expect(response.status).toBe(200);
    expect(stack.openai.last?.text).toBe(
      `${sent.slice(0, -1)},"user":${JSON.stringify(account.owner.user_id)}}`,
    );
  });
});
