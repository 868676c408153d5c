import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import type { PersonalAccessTokenGenerated, User } from "@agentnet/contracts";
import { findRepoRoot } from "@agentnet/local-backends";
import { uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CookieJar,
  signInThrough,
  startTestIdentityProvider,
  type TestIdentityProvider,
} from "../api-gateway/oidc-provider";
import { anthropicClient, configure } from "../setup";
import { type Stack, startStack } from "../stack";
import { runClaude } from "./claude-code";

const CLI = join(findRepoRoot(), "apps", "cli", "bin", "agentnet.mjs");

/**
 * Proxy tokens live 125 s here: `agentnet token` renews one with less than 2 minutes left, so
 * every run after the first 5 s gets a new one, as it would after 13 minutes by default.
 */
const TOKEN_TTL_MS = 125_000;

let stack: Stack;
let configDir: string;
let idp: TestIdentityProvider;
beforeAll(async () => {
  stack = await startStack({ agentTokenTtlMs: TOKEN_TTL_MS });
  configDir = mkdtempSync(join(tmpdir(), "agn-login-"));
  idp = await startTestIdentityProvider(`${stack.apiUrl}/api/auth/oidc/callback`);
});
afterAll(async () => {
  await stack?.stop();
  await idp?.stop();
  rmSync(configDir, { recursive: true, force: true });
});

/** `agentnet login` as a member runs it: the code it prints is confirmed (here, through the API). */
async function login(memberToken: string): Promise<void> {
  const child = spawn(process.execPath, [CLI, "login", "--api", stack.apiUrl], {
    env: { ...process.env, AGN_CONFIG_DIR: configDir },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  for await (const line of createInterface({ input: child.stdout })) {
    const code = /confirm the code ([A-Z]{4}-[A-Z]{4})/.exec(line)?.[1];
    if (!code) continue;
    const approved = await stack.api("POST", "/agent-credentials/device", memberToken, { user_code: code });
    expect(approved.status).toBe(200);
    break;
  }
  expect(await exited).toBe(0);
}

const stored = () =>
  JSON.parse(readFileSync(join(configDir, "credentials.json"), "utf8")) as { access_token: string };

describe("agentnet login, then Claude Code with apiKeyHelper = agentnet token", () => {
  it("answers through the proxy, renews the token without a failed request, and stops once the member is blocked", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.anthropicProvider.id]);
    stack.anthropic.reply = "Hello from the vendor mock.";
    const member = await account.must(
      stack.api<User>("POST", "/users", account.token, {
        email: `${uniqueId("dev")}@example.com`,
        role: "user",
      }),
    );
    const memberToken = await account.must(
      stack.api<PersonalAccessTokenGenerated>("POST", `/users/${member.id}/tokens`, account.token, {
        name: "dashboard",
        expires_in: 1,
      }),
    );
    await login(memberToken.plain_token);

    const claude = () =>
      runClaude({
        baseUrl: stack.proxy.url,
        prompt: "say hi",
        model: "claude-opus-4-5",
        env: { AGN_CONFIG_DIR: configDir, CLAUDE_CODE_API_KEY_HELPER_TTL_MS: "1000" },
        files: {
          ".claude/settings.json": JSON.stringify({ apiKeyHelper: `"${process.execPath}" "${CLI}" token` }),
        },
      });
    const first = await claude();
    expect(first.json, first.stderr || first.stdout).toMatchObject({
      is_error: false,
      result: stack.anthropic.reply,
    });
    const firstToken = stored().access_token;

    await sleep(6_000);
    const second = await claude();
    expect(second.json, second.stderr || second.stdout).toMatchObject({ is_error: false });
    expect(stored().access_token).not.toBe(firstToken);
    const events = await account.events.waitFor(2);
    expect(events.every((event) => event.user_id === member.id && event.decision === "allow")).toBe(true);

    await account.must(
      stack.api("PUT", `/users/${member.id}`, account.token, {
        role: "user",
        auto_groups: [],
        is_blocked: true,
      }),
    );
    const blocked = await fetch(`${stack.proxy.url}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${stored().access_token}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "claude-opus-4-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(blocked.status).toBe(401);
    const third = await claude();
    expect(third.json?.is_error ?? true).toBe(true);
  }, 180_000);

  it("a member signed in with the identity provider loses the policy at the next request once the provider drops their group", async () => {
    const account = await stack.newAccount();
    const domain = `corp-${Date.now()}.example`;
    const eng = await account.must(
      stack.api<{ id: string }>("POST", "/groups", account.token, { name: "eng" }),
    );
    await configure(stack, account).policy([account.anthropicProvider.id], { source_groups: [eng.id] });
    await account.must(
      stack.api("PUT", "/identity-provider", account.token, {
        issuer: idp.issuer,
        client_id: idp.clientId,
        client_secret: idp.clientSecret,
        allowed_email_domains: [domain],
        group_mapping: [{ claim_value: "eng", group_id: eng.id }],
      }),
    );
    const signIn = async () => {
      const jar = new CookieJar();
      await signInThrough(
        `${stack.apiUrl}/api/auth/oidc/start?${new URLSearchParams({ email: `frank@${domain}` })}`,
        jar,
        "frank",
      );
      const session = jar.get(new URL(stack.apiUrl).host, "agn_session");
      if (!session) throw new Error("not signed in");
      return session;
    };
    const ask = (token: string) =>
      anthropicClient(stack, token)
        .messages.create({
          model: "claude-opus-4-5",
          max_tokens: 10,
          messages: [{ role: "user", content: "hi" }],
        })
        .then(
          () => 200,
          (error: { status?: number }) => error.status ?? 0,
        );

    idp.users.set("frank", { email: `frank@${domain}`, name: "Frank", groups: ["eng"] });
    const first = await signIn();
    expect(await ask(first)).toBe(200);

    idp.users.set("frank", { email: `frank@${domain}`, name: "Frank", groups: [] });
    const second = await signIn();
    expect(await ask(second)).toBe(403);
    expect(await ask(first)).toBe(403);
  }, 60_000);
});
