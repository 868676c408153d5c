import { describe, expect, it } from "vitest";
import { forwardedQuery } from "../wires";
import { anthropic as anthropicWire } from "../wires/anthropic";
import { openai as openAiWire } from "../wires/openai";
import { acceptedBetas, catalogHeaders, upstreamHeaders } from "./forwarding";

/** What the official SDKs and agents send, plus what a member could add by hand. */
const SENT = {
  host: "gw.example.com",
  authorization: "Bearer agn_member_token",
  "x-api-key": "agn_member_token",
  "content-type": "application/json",
  "content-length": "123",
  accept: "application/json",
  "accept-encoding": "gzip, br",
  "user-agent": "OpenAI/JS 6.49.0",
  "openai-organization": "org-the-member-picked",
  "openai-project": "proj_the-member-picked",
  "openai-beta": "assistants=v2",
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "claude-code-20250219",
  "anthropic-dangerous-direct-browser-access": "true",
  "x-goog-user-project": "someone-elses-project",
  "cf-aig-authorization": "Bearer member-gateway-token",
  cookie: "session=abc",
  "x-forwarded-for": "10.0.0.1",
  forwarded: "for=10.0.0.1",
  "x-real-ip": "10.0.0.1",
  "x-stainless-os": "Linux",
  "x-stainless-retry-count": "0",
  "session-id": "s-1",
  "x-claude-code-session-id": "s-2",
  connection: "keep-alive",
  "transfer-encoding": "chunked",
};

const OWN = { "content-type": "application/json", authorization: "Bearer sk-provider", "x-caller": "a@b.c" };

describe("what of a caller's request reaches the vendor", () => {
  it("OpenAI wire: accept, user-agent and openai-beta from the caller; the rest is the proxy's", () => {
    expect(upstreamHeaders(openAiWire, SENT, OWN)).toEqual({
      accept: "application/json",
      "user-agent": "OpenAI/JS 6.49.0",
      "openai-beta": "assistants=v2",
      "accept-encoding": "identity",
      "content-type": "application/json",
      authorization: "Bearer sk-provider",
      "x-caller": "a@b.c",
    });
  });

  it("Anthropic wire: accept, user-agent, anthropic-version and anthropic-beta from the caller", () => {
    expect(upstreamHeaders(anthropicWire, SENT, { "x-api-key": "sk-ant-provider" })).toEqual({
      accept: "application/json",
      "user-agent": "OpenAI/JS 6.49.0",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "claude-code-20250219",
      "accept-encoding": "identity",
      "x-api-key": "sk-ant-provider",
    });
  });

  it("the proxy's own headers win over the caller's", () => {
    expect(
      upstreamHeaders(anthropicWire, SENT, { "Anthropic-Version": "2024-01-01" })["anthropic-version"],
    ).toBe("2024-01-01");
  });
});

describe("catalog extra headers: the provider's value, else the caller's where the wire forwards it, else the default", () => {
  const OPENAI_EXTRA = [{ name: "OpenAI-Organization" }, { name: "OpenAI-Project" }];
  const ANTHROPIC_EXTRA = [
    { name: "anthropic-version", default_value: "2023-06-01" },
    { name: "anthropic-beta" },
  ];

  it("a member cannot pick which OpenAI organization or project the provider's key bills", () => {
    expect(catalogHeaders(openAiWire, OPENAI_EXTRA, {}, SENT)).toEqual({});
    expect(catalogHeaders(openAiWire, OPENAI_EXTRA, { "OpenAI-Organization": "org-admin" }, SENT)).toEqual({
      "openai-organization": "org-admin",
    });
  });

  it("Anthropic's version and betas: configured, else the caller's, else the default", () => {
    expect(catalogHeaders(anthropicWire, ANTHROPIC_EXTRA, {}, SENT)).toEqual({
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "claude-code-20250219",
    });
    expect(catalogHeaders(anthropicWire, ANTHROPIC_EXTRA, {}, {})).toEqual({
      "anthropic-version": "2023-06-01",
    });
    expect(
      catalogHeaders(anthropicWire, ANTHROPIC_EXTRA, { "anthropic-beta": "context-1m" }, SENT),
    ).toMatchObject({
      "anthropic-beta": "context-1m",
    });
  });

  it("Vertex's and Cloudflare's billing and gateway headers come from the provider only", () => {
    const extra = [
      { name: "x-goog-user-project" },
      { name: "cf-aig-authorization" },
      { name: "cf-aig-cache-ttl" },
    ];
    expect(catalogHeaders(openAiWire, extra, {}, { ...SENT, "cf-aig-cache-ttl": "0" })).toEqual({});
  });
});

describe("query strings", () => {
  it("keep only Claude Code's beta flag on the Anthropic wire, and nothing on the OpenAI wire", () => {
    expect(forwardedQuery(anthropicWire, "beta=true")).toBe("beta=true");
    expect(forwardedQuery(anthropicWire, "beta=true&api-version=2024&x=1")).toBe("beta=true");
    expect(forwardedQuery(openAiWire, "api-version=2024-10-21&organization=org-x")).toBe("");
    expect(forwardedQuery(openAiWire, "")).toBe("");
  });
});

describe("anthropic-beta: only what the upstream accepts", () => {
  it("keeps the accepted betas in the caller's order and drops the header when none is left", () => {
    const vertex = ["context-1m-2025-08-07", "interleaved-thinking-2025-05-14"];
    expect(
      acceptedBetas("claude-code-20250219, interleaved-thinking-2025-05-14,context-1m-2025-08-07", vertex),
    ).toBe("interleaved-thinking-2025-05-14,context-1m-2025-08-07");
    expect(acceptedBetas("claude-code-20250219,oauth-2025-04-20", vertex)).toBeUndefined();
  });
});
