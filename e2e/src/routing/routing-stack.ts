import type {
  AccessLogEntry,
  AccessLogPage,
  ConsumptionCounter,
  Provider,
  UsageBreakdown,
} from "@agentnet/contracts";
import { FailingVendor, refusingUrl } from "../failing-vendor";
import { type Account, configure, readUntil } from "../setup";
import { type StackOptions, startStack } from "../stack";

export type RoutingWire = "openai" | "anthropic";

/**
 * The stack with telemetry, and in front of it a failing vendor per wire and a loopback port
 * that refuses connections, all allowed as upstreams. An account's policy grants a provider at
 * one of them first and the stack's healthy vendor of the same wire second: every request can be
 * answered, if the proxy falls back.
 */
export async function startRoutingStack(options: StackOptions = {}) {
  const failing = { openai: new FailingVendor(), anthropic: new FailingVendor() };
  const failingUrls = { openai: await failing.openai.start(), anthropic: await failing.anthropic.start() };
  const refusedUrl = await refusingUrl();
  const upstreams = [failingUrls.openai, failingUrls.anthropic, refusedUrl].map((url) => new URL(url).host);
  const stack = await startStack({
    telemetry: true,
    ...options,
    proxy: {
      ...options.proxy,
      allowedPrivateUpstreams: [...upstreams, ...(options.proxy?.allowedPrivateUpstreams ?? [])],
    },
  });
  const healthy = { openai: stack.openai, anthropic: stack.anthropic };

  const providerAt = (account: Account, wire: RoutingWire, base: string, name: string) =>
    account.must(
      stack.api<Provider>("POST", "/agent-network/providers", account.token, {
        provider_id: wire === "openai" ? "openai_api" : "anthropic_api",
        name,
        upstream_url: wire === "openai" ? `${base}/v1` : base,
        api_key: wire === "openai" ? "sk-primary-openai" : "sk-ant-primary",
      }),
    );

  /**
   * One policy over `providers` in that order, and a generous daily token cap, so every request
   * is charged on a counter.
   */
  const grant = async (account: Account, providers: Provider[], routing?: Record<string, unknown>) => {
    const setup = configure(stack, account);
    await setup.policy(
      providers.map((provider) => provider.id),
      routing ? { routing } : {},
    );
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 100_000_000, window_seconds: 86_400 },
    });
  };

  /**
   * A fresh account whose one policy grants a provider of `wire` at `firstUrl` (the failing
   * vendor's unless said otherwise), then the healthy one, with the policy's `routing` when
   * given (of the two providers, for weights by id).
   */
  const twoProviders = async (
    wire: RoutingWire,
    options: {
      firstUrl?: string;
      routing?: (first: Provider, second: Provider) => Record<string, unknown>;
    } = {},
  ) => {
    const account = await stack.newAccount();
    const name = wire === "openai" ? "OpenAI primary" : "Claude primary";
    const first = await providerAt(account, wire, options.firstUrl ?? failingUrls[wire], name);
    const second = wire === "openai" ? account.openaiProvider : account.anthropicProvider;
    await grant(account, [first, second], options.routing?.(first, second));
    return { account, first, second };
  };

  /** A fresh account whose one policy grants only providers of `wire` at `urls`, in that order. */
  const onlyProvidersAt = async (wire: RoutingWire, urls: string[]) => {
    const account = await stack.newAccount();
    const providers: Provider[] = [];
    for (const [i, url] of urls.entries())
      providers.push(await providerAt(account, wire, url, `${wire} ${i + 1}`));
    await grant(account, providers);
    return { account, providers };
  };

  const stop = async () => {
    await stack.stop();
    await failing.openai.stop();
    await failing.anthropic.stop();
  };

  return { stack, failing, failingUrls, refusedUrl, healthy, twoProviders, onlyProvidersAt, stop };
}

export type RoutingStack = Awaited<ReturnType<typeof startRoutingStack>>;

/** The account's access-log rows, oldest first, once `count` are stored. */
export async function rowsOnceStored(routing: RoutingStack, account: Account, count: number) {
  const page = await readUntil(
    () =>
      account.must(
        routing.stack.api<AccessLogPage>(
          "GET",
          "/agent-network/access-logs?sort_order=ascending&page_size=100",
          account.token,
        ),
      ),
    (read) => read.total_records >= count,
  );
  return { rows: page.data as AccessLogEntry[], total: page.total_records };
}

/** Requests, tokens and cost per resolved provider, as the usage breakdown reads them. */
export async function usageByProvider(routing: RoutingStack, account: Account, requests: number) {
  const breakdown = await readUntil(
    () =>
      account.must(
        routing.stack.api<UsageBreakdown>("GET", "/agent-network/usage/breakdown?by=provider", account.token),
      ),
    (read) => read.data.reduce((sum, row) => sum + row.requests, 0) >= requests,
  );
  return breakdown.data;
}

/** The caller's daily counter once it has counted `inputTokens`. */
export async function counterOnceCharged(routing: RoutingStack, account: Account, inputTokens: number) {
  const counters = await readUntil(
    () =>
      account.must(
        routing.stack.api<ConsumptionCounter[]>("GET", "/agent-network/consumption", account.token),
      ),
    (list) =>
      list.some((counter) => counter.dimension_kind === "user" && counter.tokens_input >= inputTokens),
  );
  return counters.find((counter) => counter.dimension_kind === "user");
}
