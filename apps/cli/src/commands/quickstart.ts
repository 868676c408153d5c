import { randomBytes } from "node:crypto";
import type { CliEnv } from "../env";
import { bootstrap } from "./bootstrap";

export interface QuickstartOptions {
  /** An owner or admin token of an existing account; without it a new account is bootstrapped. */
  token?: string | undefined;
  email?: string | undefined;
  /** A real upstream; without it the demo upstream `agentnet up` runs (OpenAI and Anthropic formats). */
  upstreamUrl?: string | undefined;
  apiKey?: string | undefined;
  /** The catalog provider of `upstreamUrl`: openai_api, anthropic_api, ... or custom (any OpenAI-compatible). */
  provider?: string | undefined;
}

export interface QuickstartResult {
  account_id: string;
  owner_token?: string;
  provider_ids: string[];
  policy_id: string;
  member_email: string;
  member_token: string;
  proxy_url: string;
}

interface Named {
  id: string;
  name: string;
}

/**
 * `agentnet quickstart`: from an empty stack to a token that can send requests, through the public
 * API as an admin would: settings (if none), the provider(s), a policy letting the All group use
 * them, and a member with a 30-day token. Reuses what a previous quickstart created.
 */
export async function quickstart(env: CliEnv, options: QuickstartOptions): Promise<QuickstartResult> {
  const apiBase = `http://${env.AGN_API_HOST}:${env.AGN_API_PORT}/api`;
  const bootstrapped = options.token
    ? undefined
    : await bootstrap(env, options.email ?? `owner-${suffix()}@agentnet.local`, "Quickstart owner");
  const ownerToken = options.token ?? bootstrapped?.token ?? "";
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${apiBase}${path}`, {
      method,
      headers: {
        authorization: `Token ${ownerToken}`,
        accept: "application/json",
        "content-type": "application/json",
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} /api${path} answered ${response.status}: ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };

  const [account] = await api<{ id: string }[]>("GET", "/accounts");
  const settings = await api<{ endpoint: string }>("GET", "/agent-network/settings");
  if (settings.endpoint === "")
    await api("POST", "/agent-network/settings", { proxy_address: "gw.agentnet.local" });

  const existing = await api<Named[]>("GET", "/agent-network/providers");
  const ensureProvider = async (body: Record<string, unknown>) =>
    existing.find((provider) => provider.name === body.name)?.id ??
    (await api<Named>("POST", "/agent-network/providers", body)).id;
  const demo = `http://127.0.0.1:${env.AGN_DEMO_UPSTREAM_PORT}`;
  const providerIds = options.upstreamUrl
    ? [
        await ensureProvider({
          provider_id: options.provider ?? "openai_api",
          name: `Quickstart ${options.provider ?? "openai_api"}`,
          upstream_url: options.upstreamUrl,
          api_key: options.apiKey ?? "",
        }),
      ]
    : [
        await ensureProvider({
          provider_id: "custom",
          name: "Demo (OpenAI format)",
          upstream_url: `${demo}/v1`,
          api_key: "demo",
        }),
        await ensureProvider({
          provider_id: "anthropic_api",
          name: "Demo (Anthropic format)",
          upstream_url: demo,
          api_key: "demo",
        }),
      ];

  const groups = await api<Named[]>("GET", "/groups");
  const all = groups.find((group) => group.name === "All") ?? groups[0];
  const policies = await api<Named[]>("GET", "/agent-network/policies");
  const policyId =
    policies.find((policy) => policy.name === "quickstart")?.id ??
    (
      await api<Named>("POST", "/agent-network/policies", {
        name: "quickstart",
        source_groups: [all?.id],
        destination_provider_ids: providerIds,
      })
    ).id;

  const memberEmail = `member-${suffix()}@agentnet.local`;
  const member = await api<Named>("POST", "/users", {
    email: memberEmail,
    role: "user",
    name: "Quickstart member",
  });
  const token = await api<{ plain_token: string }>("POST", `/users/${member.id}/tokens`, {
    name: "quickstart",
    expires_in: 30,
  });
  return {
    account_id: account?.id ?? "",
    ...(bootstrapped ? { owner_token: bootstrapped.token } : {}),
    provider_ids: providerIds,
    policy_id: policyId,
    member_email: memberEmail,
    member_token: token.plain_token,
    proxy_url: `http://${env.AGN_API_HOST}:${env.AGN_PROXY_PORT}`,
  };
}

/** Ready-to-paste configuration for the member token. */
export function quickstartSnippets(result: QuickstartResult, demo: boolean): string[] {
  const { proxy_url: proxy, member_token: token } = result;
  const model = demo ? "demo-chat" : "gpt-4o-mini";
  return [
    `OpenAI SDK      new OpenAI({ baseURL: "${proxy}/v1", apiKey: "${token}" })`,
    `Anthropic SDK   new Anthropic({ baseURL: "${proxy}", apiKey: "${token}" })`,
    `curl            curl -s ${proxy}/v1/chat/completions -H "Authorization: Bearer ${token}" -H "content-type: application/json" -d '{"model":"${model}","messages":[{"role":"user","content":"hi"}]}'`,
    `Claude Code     ANTHROPIC_BASE_URL=${proxy} ANTHROPIC_AUTH_TOKEN=${token} claude -p "hi"`,
    `Codex           CODEX_API_KEY=${token} codex exec -c openai_base_url=${proxy}/v1 "hi"`,
  ];
}

const suffix = () => randomBytes(3).toString("hex");
