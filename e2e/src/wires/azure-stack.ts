import type { AccessLogEntry, Provider } from "@agentnet/contracts";
import { expect } from "vitest";
import type { SeenRequest } from "../upstream";
import { AZURE_V1, FakeAzure } from "../vendors/azure";
import {
  accountWithProvider,
  expectAllowedRow,
  expectVendorCredential,
  startVendorStack,
} from "./wire-stack";

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
  const stack = await startVendorStack(azureUrl);

  const reset = () => {
    azure.usage = { ...AZURE_USAGE };
    azure.reply = "Hello from Azure";
  };

  /**
   * A fresh account, its azure_api provider, under a daily token cap per user (generous unless
   * said); its upstream_url is the resource's v1 API, or with `resourceRoot` the resource itself
   * (the portal's "Endpoint").
   */
  const azureAccount = async (options: { userCap?: number; resourceRoot?: boolean } = {}) => {
    const granted = await accountWithProvider(
      stack,
      {
        provider_id: "azure_api",
        name: "Azure",
        upstream_url: options.resourceRoot ? azureUrl : `${azureUrl}${AZURE_V1}`,
        api_key: AZURE_KEY,
        models: [{ id: DEPLOYMENT, ...RATES }],
      },
      options,
    );
    return { ...granted, seenBefore: azure.seen.length };
  };

  const stop = async () => {
    await stack.stop();
    await azure.stop();
  };

  return { stack, azure, azureUrl, reset, azureAccount, stop };
}

export type AzureStack = Awaited<ReturnType<typeof startAzureStack>>;

/** The row of a request with the fixed usage: allowed, the vendor's counts, priced by hand. */
export function expectAzureRow(row: AccessLogEntry | undefined, provider: Provider, stream: boolean) {
  expectAllowedRow(row, {
    provider,
    model: DEPLOYMENT,
    stream,
    counts: {
      input_tokens: AZURE_USAGE.input,
      cached_input_tokens: AZURE_USAGE.cached,
      output_tokens: AZURE_USAGE.output,
    },
    cost: EXPECTED_COST,
  });
}

/** The vendor saw the resource key in `api-key` on every request, and the agentnet token nowhere. */
export function expectAzureKey(seen: SeenRequest[], token: string) {
  expectVendorCredential(
    seen,
    (request) => {
      expect(request.headers["api-key"]).toBe(AZURE_KEY);
      expect(request.headers.authorization).toBeUndefined();
    },
    token,
  );
}
