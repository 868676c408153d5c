import type { AccessLogEntry, AccessLogPage, Provider } from "@agentnet/contracts";
import { expect } from "vitest";
import { type Account, configure, readUntil } from "../setup";
import { type Stack, startStack } from "../stack";
import type { SeenRequest } from "../upstream";
import { AZURE_V1, FakeAzure } from "../vendors/azure";

export const AZURE_KEY = "azure-resource-key";
/** The deployment's name, chosen by the operator: what Azure's clients send as the model. */
export const DEPLOYMENT = "prod-gpt4o";
/** The deployment's prices on the provider (gpt-4o at Global Standard), USD per 1,000 tokens. */
const RATES = { input_per_1k: 0.0025, cached_input_per_1k: 0.00125, output_per_1k: 0.01 };

/** A prompt partly cached, a short answer. */
export const AZURE_USAGE = { input: 10_000, cached: 4_000, output: 500, creation: 0 };
/**
 * By hand: (10,000 − 4,000) × $0.0025/1k + 4,000 × $0.00125/1k + 500 × $0.01/1k
 * = $0.015 + $0.005 + $0.005 = $0.025.
 */
const EXPECTED_COST = 0.025;

/**
 * The stack with telemetry behind a fake Azure OpenAI resource on its v1 API, allowed as an
 * upstream. `azureAccount` gives a fresh account whose one policy grants an azure_api provider
 * there, its models list naming the deployment, priced.
 */
export async function startAzureStack() {
  const azure = new FakeAzure(AZURE_KEY);
  const azureUrl = await azure.start();
  const stack = await startStack({
    telemetry: true,
    proxy: { allowedPrivateUpstreams: [new URL(azureUrl).host] },
  });

  /** The fixed usage and reply again, as each test starts. */
  const reset = () => {
    azure.usage = { ...AZURE_USAGE };
    azure.reply = "Hello from Azure";
  };

  /** A fresh account, its azure_api provider, under a daily token cap per user (generous unless said). */
  const azureAccount = async (options: { userCap?: number } = {}) => {
    const account = await stack.newAccount();
    const provider = await account.must(
      stack.api<Provider>("POST", "/agent-network/providers", account.token, {
        provider_id: "azure_api",
        name: "Azure",
        upstream_url: `${azureUrl}${AZURE_V1}`,
        api_key: AZURE_KEY,
        models: [{ id: DEPLOYMENT, ...RATES }],
      }),
    );
    const setup = configure(stack, account);
    await setup.policy([provider.id]);
    await setup.budgetRule({
      token_limit: {
        enabled: true,
        group_cap: 0,
        user_cap: options.userCap ?? 100_000_000,
        window_seconds: 86_400,
      },
    });
    return { account, provider, seenBefore: azure.seen.length };
  };

  const stop = async () => {
    await stack.stop();
    await azure.stop();
  };

  return { stack, azure, azureUrl, reset, azureAccount, stop };
}

export type AzureStack = Awaited<ReturnType<typeof startAzureStack>>;

/** The account's access-log rows, oldest first, once `count` are stored, and a moment more for any extra row. */
export async function storedRows(stack: Stack, account: Account, count: number): Promise<AccessLogEntry[]> {
  const read = () =>
    account.must(
      stack.api<AccessLogPage>(
        "GET",
        "/agent-network/access-logs?sort_order=ascending&page_size=100",
        account.token,
      ),
    );
  await readUntil(read, (page) => page.total_records >= count);
  await new Promise((resolve) => setTimeout(resolve, 500));
  return (await read()).data;
}

/** The row of a request with the fixed usage: allowed, the vendor's counts, priced by hand. */
export function expectAzureRow(row: AccessLogEntry | undefined, provider: Provider, stream: boolean) {
  expect(row).toMatchObject({
    decision: "allow",
    status_code: 200,
    resolved_provider_id: provider.id,
    model: DEPLOYMENT,
    stream,
    input_tokens: AZURE_USAGE.input,
    cached_input_tokens: AZURE_USAGE.cached,
    output_tokens: AZURE_USAGE.output,
  });
  expect(row?.cost_usd).toBeCloseTo(EXPECTED_COST, 9);
}

/** The vendor saw the resource key in `api-key` on every request, and the agentnet token nowhere. */
export function expectAzureKey(seen: SeenRequest[], token: string) {
  expect(seen.length).toBeGreaterThan(0);
  for (const request of seen) {
    expect(request.headers["api-key"]).toBe(AZURE_KEY);
    expect(request.headers.authorization).toBeUndefined();
    expect(JSON.stringify([request.headers, request.query, request.body])).not.toContain(token);
  }
}
