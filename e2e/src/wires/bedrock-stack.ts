import type { AccessLogEntry, Provider } from "@agentnet/contracts";
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { expect } from "vitest";
import type { Account } from "../setup";
import type { SeenRequest } from "../upstream";
import { type AwsAccessKey, type BedrockUsage, FakeBedrock } from "../vendors/bedrock";
import {
  accountWithProvider,
  expectAllowedRow,
  expectVendorCredential,
  startVendorStack,
  storedRows,
} from "./wire-stack";

/** Claude Sonnet 4.5 as Bedrock names it in one region (its foundation model id). */
export const MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0";

export const API_KEY = "ABSKQmVkcm9ja0FQSUtleS1mYWtlLWtleQ==";
export const ACCESS_KEY: AwsAccessKey = {
  access_key_id: "AKIAAGENTNETTEST0001",
  secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYAGENTNETKEY",
};
export const SESSION_KEY: AwsAccessKey = {
  access_key_id: "ASIAAGENTNETTEST0002",
  secret_access_key: "c2Vzc2lvbi1zZWNyZXQta2V5LWZvci10ZXN0aW5n",
  session_token: "IQoJb3JpZ2luX2VjEAgaCXVzLWVhc3QtMSJHMEUCIQ-session",
};

/**
 * Claude Sonnet 4.5 on Bedrock in one region (an in-region model id), USD per million tokens:
 * Anthropic's list prices plus Bedrock's 10 % for regional endpoints of Sonnet 4.5 and later:
 * $3.30 in, $16.50 out, cache reads $0.33, 5-minute cache writes $4.125.
 */
const RATES = { input: 3.3, output: 16.5, cacheRead: 0.33, cacheWrite: 4.125 };

/** An agent's turn: most of its prompt read from the cache, some written to it. */
export const USAGE: BedrockUsage = { input: 3_000, output: 500, cacheRead: 20_000, cacheWrite: 1_000 };

/**
 * By hand, Anthropic's shape (cache reads and writes beside input):
 * 3,000 × $3.30/M + 20,000 × $0.33/M + 1,000 × $4.125/M + 500 × $16.50/M
 * = $0.0099 + $0.0066 + $0.004125 + $0.00825 = $0.028875.
 */
export const EXPECTED_COST =
  (USAGE.input * RATES.input +
    USAGE.cacheRead * RATES.cacheRead +
    USAGE.cacheWrite * RATES.cacheWrite +
    USAGE.output * RATES.output) /
  1e6;

const EXPECTED_ROW = {
  input_tokens: USAGE.input,
  cached_input_tokens: USAGE.cacheRead,
  cache_creation_tokens: USAGE.cacheWrite,
  output_tokens: USAGE.output,
};

/** The stack with telemetry behind a fake Bedrock that knows API_KEY, ACCESS_KEY and SESSION_KEY. */
export async function startBedrockStack() {
  const bedrock = new FakeBedrock([API_KEY], [ACCESS_KEY, SESSION_KEY]);
  const bedrockUrl = await bedrock.start();
  const stack = await startVendorStack(bedrockUrl);

  const reset = () => {
    bedrock.claudeUsage = { ...USAGE };
    bedrock.reply = "Hello from Claude on Bedrock";
    bedrock.breakStreamAfter = undefined;
  };

  /**
   * A fresh account whose one policy grants a bedrock_api provider at the fake vendor, keyed by a
   * Bedrock API key or by IAM access keys (the region in the key: the vendor's URL names none).
   */
  const bedrockAccount = async (options: { userCap?: number; accessKey?: AwsAccessKey } = {}) => {
    const apiKey = options.accessKey
      ? JSON.stringify({ ...options.accessKey, region: bedrock.region })
      : API_KEY;
    const granted = await accountWithProvider(
      stack,
      { provider_id: "bedrock_api", name: "Claude on Bedrock", upstream_url: bedrockUrl, api_key: apiKey },
      options,
    );
    return { ...granted, seenBefore: bedrock.seen.length };
  };

  const rows = (account: Account, count: number) => storedRows(stack, account, count);

  /**
   * The AWS SDK's Bedrock Runtime client as a new user makes it: its default (HTTP/2) handler, the
   * gateway as its endpoint, the agentnet token as its Bedrock API key (what AWS_BEARER_TOKEN_BEDROCK sets).
   */
  const bedrockClient = (token: string) =>
    new BedrockRuntimeClient({
      region: "us-west-2",
      endpoint: stack.proxy.url,
      token: { token },
      authSchemePreference: ["httpBearerAuth"],
      maxAttempts: 1,
    });

  const stop = async () => {
    await stack.stop();
    await bedrock.stop();
  };

  return { stack, bedrock, bedrockUrl, reset, bedrockAccount, rows, bedrockClient, stop };
}

export type BedrockStack = Awaited<ReturnType<typeof startBedrockStack>>;

/** The row of a request of the fixed usage: allowed, the vendor's counts, priced by hand. */
export function expectBedrockRow(row: AccessLogEntry | undefined, provider: Provider, stream: boolean) {
  expectAllowedRow(row, { provider, model: MODEL, stream, counts: EXPECTED_ROW, cost: EXPECTED_COST });
}

/** The vendor saw the provider's Bedrock API key on every request, never the agentnet token. */
export function expectBedrockKey(seen: SeenRequest[], token: string) {
  expectVendorCredential(
    seen,
    (request) => expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`),
    token,
  );
}
