import type { AccessLogEntry, Provider } from "@agentnet/contracts";
import { startGoogleTokenServer } from "@agentnet/testkit";
import { type GenerateContentResponse, GoogleGenAI } from "@google/genai";
import { expect } from "vitest";
import type { Account } from "../setup";
import type { SeenRequest } from "../upstream";
import { FakeGoogle, type GeminiUsage } from "../vendors/google";
import {
  accountWithProvider,
  expectAllowedRow,
  expectVendorCredential,
  startVendorStack,
  storedRows,
} from "./wire-stack";

export const GEMINI_KEY = "gemini-provider-key";
export const VERTEX_TOKEN = "ya29.vertex-provider-access-token";
export const PROJECT = "agn-project";
export const LOCATION = "us-central1";
export const MODEL = "gemini-2.5-flash";
/** gemini-2.5-flash in the catalog (gemini_api and vertex_api alike), USD per million tokens. */
const RATES = { input: 0.3, cached_input: 0.03, output: 2.5 };

/** A prompt with a cached part and tool results, an answer with thinking. */
export const USAGE: GeminiUsage = {
  promptTokenCount: 12_000,
  cachedContentTokenCount: 4_000,
  toolUsePromptTokenCount: 1_000,
  candidatesTokenCount: 300,
  thoughtsTokenCount: 500,
};
/**
 * By hand: input = prompt 12,000 + tool-use prompt 1,000 = 13,000, of which 4,000 cached;
 * output = answer 300 + thinking 500 = 800.
 * (13,000 − 4,000) × $0.30/M + 4,000 × $0.03/M + 800 × $2.50/M = $0.0027 + $0.00012 + $0.002.
 */
const EXPECTED_ROW = { input_tokens: 13_000, cached_input_tokens: 4_000, output_tokens: 800 };
const EXPECTED_COST = (9_000 * RATES.input + 4_000 * RATES.cached_input + 800 * RATES.output) / 1e6;

export type GoogleKind = "gemini_api" | "vertex_api";

/**
 * The stack with telemetry behind a fake Google vendor (Gemini API and Vertex) and Google's token
 * endpoint, both allowed as upstreams. The vendor takes the Gemini API key `GEMINI_KEY`, and on
 * Vertex the bare token `VERTEX_TOKEN` or a token minted at the endpoint.
 */
export async function startGeminiStack() {
  const tokens = await startGoogleTokenServer();
  const google = new FakeGoogle({
    apiKey: GEMINI_KEY,
    acceptsBearer: (token) => token === VERTEX_TOKEN || tokens.accepts(token),
  });
  const googleUrl = await google.start();
  const stack = await startVendorStack(googleUrl, tokens);

  const reset = () => {
    google.geminiUsage = { ...USAGE };
    google.reply = "Hello from Gemini";
    google.nextAnswers = [];
  };

  /**
   * A fresh account whose one policy grants one Google provider at the fake vendor, under a daily
   * token cap per user (generous unless said). Vertex's key is a bare access token unless said.
   * With `capture`, prompts and answers are collected, PII redacted; with `identity`, the provider
   * names the caller to the vendor in `X-Caller` and `X-Caller-Groups`.
   */
  const googleAccount = async (
    kind: GoogleKind,
    options: { userCap?: number; apiKey?: string; capture?: boolean; identity?: boolean } = {},
  ) => {
    const identity = options.identity
      ? { identity_header_user_id: "X-Caller", identity_header_groups: "X-Caller-Groups" }
      : {};
    const granted = await accountWithProvider(
      stack,
      kind === "gemini_api"
        ? {
            provider_id: "gemini_api",
            name: "Gemini",
            upstream_url: googleUrl,
            api_key: GEMINI_KEY,
            ...identity,
          }
        : {
            provider_id: "vertex_api",
            name: "Vertex",
            upstream_url: `${googleUrl}/v1/projects/${PROJECT}/locations/${LOCATION}`,
            api_key: options.apiKey ?? VERTEX_TOKEN,
            ...identity,
          },
      options,
    );
    return { ...granted, seenBefore: google.seen.length };
  };

  /** The account's access-log rows once `count` are stored, and a moment more for any extra row. */
  const rows = (account: Account, count: number) => storedRows(stack, account, count);

  /** Google's SDK on the Gemini API's paths, the gateway as its base URL, the agentnet token as its key. */
  const genai = (token: string) =>
    new GoogleGenAI({ apiKey: token, httpOptions: { baseUrl: stack.proxy.url } });

  const stop = async () => {
    await stack.stop();
    await google.stop();
    await tokens.close();
  };

  return { stack, google, googleUrl, tokens, reset, googleAccount, rows, genai, stop };
}

export type GeminiStack = Awaited<ReturnType<typeof startGeminiStack>>;

/** The row every request of the fixed usage gets: allowed, the vendor's counts, priced by hand. */
export function expectPricedRow(row: AccessLogEntry | undefined, provider: Provider, stream: boolean) {
  expectAllowedRow(row, { provider, model: MODEL, stream, counts: EXPECTED_ROW, cost: EXPECTED_COST });
}

/** The vendor saw the provider's credential on every request, and the agentnet token nowhere. */
export function expectProviderCredential(seen: SeenRequest[], kind: GoogleKind, token: string) {
  expectVendorCredential(
    seen,
    (request) => {
      if (kind === "gemini_api") expect(request.headers["x-goog-api-key"]).toBe(GEMINI_KEY);
      else expect(request.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
    },
    token,
  );
}

/** Reads a stream to its end: the text it said and its last chunk. */
export async function drain(stream: AsyncGenerator<GenerateContentResponse>) {
  let text = "";
  let last: GenerateContentResponse | undefined;
  for await (const chunk of stream) {
    text += chunk.text ?? "";
    last = chunk;
  }
  return { text, last };
}
