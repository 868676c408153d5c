import type { AccessLogEntry, CatalogProvider, Provider } from "@agentnet/contracts";
import { type GoogleServiceAccount, startGoogleTokenServer } from "@agentnet/testkit";
import AnthropicVertex from "@anthropic-ai/vertex-sdk";
import { expect } from "vitest";
import type { Account } from "../setup";
import type { SeenRequest } from "../upstream";
import { type ClaudeUsage, FakeVertexAnthropic } from "../vendors/vertex-anthropic";
import {
  accountWithProvider,
  expectAllowedRow,
  expectVendorCredential,
  startVendorStack,
  storedRows,
} from "./wire-stack";

export const PROJECT = "agn-claude-project";
export const LOCATION = "us-east5";
/** Claude Sonnet 4.5 as Vertex names it (its model id with the `@` version). */
export const MODEL = "claude-sonnet-4-5@20250929";

/**
 * Claude Sonnet 4.5 on Vertex, USD per million tokens: $3 in, $15 out, cache reads $0.30, 5-minute
 * cache writes $3.75 (1.25× input), 1-hour cache writes $6 (2× input) — Anthropic's list prices,
 * which Google lists for Claude on Vertex too.
 */
const RATES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6 };

/** An agent's turn: most of its prompt read from the cache, some written to each cache. */
export const USAGE: ClaudeUsage = {
  input: 3_000,
  cacheRead: 20_000,
  cacheWrite5m: 1_000,
  cacheWrite1h: 4_000,
  output: 500,
};
/**
 * By hand, Anthropic's shape (cache reads and writes additive to input):
 * 3,000 × $3/M + 20,000 × $0.30/M + 1,000 × $3.75/M + 4,000 × $6/M + 500 × $15/M
 * = $0.009 + $0.006 + $0.00375 + $0.024 + $0.0075 = $0.05025.
 */
const EXPECTED_ROW = {
  input_tokens: 3_000,
  cached_input_tokens: 20_000,
  cache_creation_tokens: 5_000,
  output_tokens: 500,
};
export const EXPECTED_COST =
  (USAGE.input * RATES.input +
    USAGE.cacheRead * RATES.cacheRead +
    USAGE.cacheWrite5m * RATES.cacheWrite5m +
    USAGE.cacheWrite1h * RATES.cacheWrite1h +
    USAGE.output * RATES.output) /
  1e6;

/**
 * The stack with telemetry behind a fake Vertex serving Claude and Google's token endpoint, both
 * allowed as upstreams. The vendor takes only tokens minted at that endpoint (from the
 * service-account key each account's provider holds).
 */
export async function startVertexClaudeStack() {
  const tokens = await startGoogleTokenServer();
  const vertex = new FakeVertexAnthropic((token) => tokens.accepts(token));
  const vertexUrl = await vertex.start();
  const stack = await startVendorStack(vertexUrl, tokens);

  const reset = () => {
    vertex.claudeUsage = { ...USAGE };
    vertex.reply = "Hello from Claude on Vertex";
  };

  /**
   * A fresh account whose one policy grants a vertex_api provider at the fake vendor, keyed by a
   * new service-account key, under a daily token cap per user (generous unless said).
   */
  const claudeAccount = async (options: { userCap?: number } = {}) => {
    const serviceAccount = tokens.serviceAccount({ projectId: PROJECT });
    const granted = await accountWithProvider(
      stack,
      {
        provider_id: "vertex_api",
        name: "Claude on Vertex",
        upstream_url: `${vertexUrl}/v1/projects/${PROJECT}/locations/${LOCATION}`,
        api_key: serviceAccount.json,
      },
      options,
    );
    return { ...granted, serviceAccount, seenBefore: vertex.seen.length };
  };

  /** The account's access-log rows once `count` are stored, and a moment more for any extra row. */
  const rows = (account: Account, count: number) => storedRows(stack, account, count);

  /**
   * The Vertex SDK with the gateway as its base URL. Its auth client hands over the agentnet token
   * as the bearer a Google access token would be (google-auth-library's own clients would look for
   * Google credentials on this machine). The client's project and region are its own: the
   * provider's upstream_url names the ones the vendor gets.
   */
  const vertexClient = (token: string) =>
    new AnthropicVertex({
      baseURL: `${stack.proxy.url}/v1`,
      region: "europe-west1",
      projectId: "client-project",
      maxRetries: 0,
      authClient: {
        getRequestHeaders: async () => new Headers({ authorization: `Bearer ${token}` }),
      } as unknown as NonNullable<ConstructorParameters<typeof AnthropicVertex>[0]>["authClient"],
    });

  /**
   * Whether the catalog's vertex_api entry prices MODEL: until Claude on Vertex is in the catalog,
   * its requests are unpriced (cost 0) and the rows' cost is checked as that.
   */
  const catalogPricesModel = async (account: Account): Promise<boolean> => {
    const catalog = await account.must(
      stack.api<CatalogProvider[]>("GET", "/agent-network/catalog/providers", account.token),
    );
    const entry = catalog.find((provider) => provider.id === "vertex_api");
    // Listed by its Vertex id, or by Anthropic's with the Vertex id as an alias.
    const ids = [MODEL, MODEL.split("@")[0]];
    return entry?.models.some((model) => ids.includes(model.id)) ?? false;
  };

  const stop = async () => {
    await stack.stop();
    await vertex.stop();
    await tokens.close();
  };

  return {
    stack,
    vertex,
    vertexUrl,
    tokens,
    reset,
    claudeAccount,
    rows,
    vertexClient,
    catalogPricesModel,
    stop,
  };
}

export type VertexClaudeStack = Awaited<ReturnType<typeof startVertexClaudeStack>>;

/** Vertex's path for Claude at the provider's project and location. */
export const vertexPath = (method: "rawPredict" | "streamRawPredict", model = MODEL) =>
  `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/anthropic/models/${model}:${method}`;

/**
 * The row every request of the fixed usage gets: allowed, the vendor's counts, priced by hand
 * (`priced`: the catalog prices the model; else it is unpriced, cost 0).
 */
export function expectPricedRow(
  row: AccessLogEntry | undefined,
  provider: Provider,
  stream: boolean,
  priced: boolean,
) {
  expectAllowedRow(row, {
    provider,
    model: MODEL,
    stream,
    counts: EXPECTED_ROW,
    cost: priced ? EXPECTED_COST : 0,
  });
}

/**
 * The vendor saw a token minted from the provider's service-account key on every request, and
 * neither the agentnet token nor the key anywhere.
 */
export function expectMintedCredential(
  seen: SeenRequest[],
  stack: VertexClaudeStack,
  serviceAccount: GoogleServiceAccount,
  token: string,
) {
  const { private_key } = serviceAccount.key;
  expectVendorCredential(
    seen,
    (request) => {
      const bearer = request.headers.authorization?.replace(/^Bearer /, "") ?? "";
      expect(stack.tokens.subjectOf(bearer)).toBe(serviceAccount.email);
    },
    token,
    // A line of the key's body: the PEM's framing says nothing of which key it is.
    private_key.split("\n")[1] ?? private_key,
  );
}
