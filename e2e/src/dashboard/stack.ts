import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "@agentnet/bus";
import { ControlPlane } from "@agentnet/contracts";
import { findRepoRoot } from "@agentnet/local-backends";
import { uniqueId } from "@agentnet/testkit";
import { build } from "vite";
import { type StackOptions, startStack } from "../stack";

const DASHBOARD_ROOT = join(findRepoRoot(), "apps", "dashboard");

/** Builds the dashboard with its own vite config into a temp dir (what the gateway serves). */
export async function buildDashboard(outDir: string): Promise<void> {
  await build({
    configFile: join(DASHBOARD_ROOT, "vite.config.ts"),
    root: DASHBOARD_ROOT,
    logLevel: "warn",
    build: { outDir, emptyOutDir: true },
  });
}

/**
 * The project's one stack fixture (`startStack`) with telemetry, the api-gateway serving the
 * freshly built dashboard, and the helpers the browser tests drive it with; `notifier` delivers
 * alerts by webhook.
 */
export async function startDashboardStack(options: Pick<StackOptions, "notifier"> = {}) {
  const tmp = mkdtempSync(join(tmpdir(), "agn-dashboard-"));
  const dashboardDir = join(tmp, "dist");
  await buildDashboard(dashboardDir);
  const stack = await startStack({
    telemetry: true,
    dashboardDir,
    proxy: { snapshotMaxAgeMs: 500 },
    consumption: { sweepIntervalMs: 0 },
    ...options,
  });
  stack.openai.usage = { input: 120, output: 30, cached: 0, creation: 0 };
  const baseUrl = stack.apiUrl;

  const api = async <T>(method: string, path: string, token: string, body?: unknown): Promise<T> => {
    const result = await stack.api<T>(method, path.replace(/^\/api/, ""), token, body);
    if (result.status >= 300)
      throw new Error(`${method} ${path}: ${result.status} ${JSON.stringify(result.body)}`);
    return result.body;
  };

  const bootstrap = () =>
    request(stack.nc, ControlPlane.accountsBootstrap, {
      email: `${uniqueId("owner")}@example.com`,
      name: "Olivia Owner",
    });

  /** A regular member of the owner's account and a token of theirs. */
  const addMember = async (ownerToken: string, name: string) => {
    const user = await api<{ id: string }>("POST", "/api/users", ownerToken, {
      email: `${uniqueId("m")}@example.com`,
      name,
      role: "user",
    });
    const token = await api<{ plain_token: string }>("POST", `/api/users/${user.id}/tokens`, ownerToken, {
      name: "dashboard-test",
      expires_in: 1,
    });
    return { id: user.id, token: token.plain_token };
  };

  /**
   * The stack's fake OpenAI as the owner's provider, and a policy letting the All group use it
   * (`policy` adds to it, e.g. guardrails): what traffic through the proxy needs.
   */
  const openAiForEveryone = async (ownerToken: string, policy: Record<string, unknown> = {}) => {
    const provider = await api<{ id: string }>("POST", "/api/agent-network/providers", ownerToken, {
      provider_id: "openai_api",
      name: "OpenAI",
      upstream_url: `${stack.openaiUrl}/v1`,
      api_key: "sk-test-upstream",
    });
    const groups = await api<{ id: string; name: string }[]>("GET", "/api/groups", ownerToken);
    const everyone = groups.find((g) => g.name === "All");
    if (!everyone) throw new Error(`no All group in ${JSON.stringify(groups)}`);
    await api("POST", "/api/agent-network/policies", ownerToken, {
      name: "Everyone may use OpenAI",
      source_groups: [everyone.id],
      destination_provider_ids: [provider.id],
      ...policy,
    });
    return provider;
  };

  /** One chat completion through the gateway proxy, as an SDK would send it. */
  const chat = async (
    token: string,
    options: { session?: string; model?: string; maxTokens?: number; content?: string } = {},
  ) => {
    const response = await fetch(`${stack.proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(options.session ? { "x-session-id": options.session } : {}),
      },
      body: JSON.stringify({
        model: options.model ?? "gpt-4o-mini",
        messages: [{ role: "user", content: options.content ?? "Summarise the release notes in one line." }],
        // The proxy reserves prompt + max_tokens against caps (4,096 when unset): keep it small.
        max_tokens: options.maxTokens ?? 200,
      }),
    });
    await response.text();
    return response.status;
  };

  /** Polls an API read until `ready` accepts it (telemetry and consumption ingest asynchronously). */
  const waitFor = async <T>(
    read: () => Promise<T>,
    ready: (value: T) => boolean,
    what: string,
    timeoutMs = 20_000,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (ready(value)) return value;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 400)}`);
      await new Promise((done) => setTimeout(done, 200));
    }
  };

  const stop = async () => {
    await stack.stop();
    rmSync(tmp, { recursive: true, force: true });
  };

  return {
    baseUrl,
    upstreamUrl: stack.openaiUrl,
    api,
    bootstrap,
    addMember,
    openAiForEveryone,
    chat,
    waitFor,
    stop,
  };
}

export type DashboardStack = Awaited<ReturnType<typeof startDashboardStack>>;
