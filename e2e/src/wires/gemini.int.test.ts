import type { AccessLogEntry, AccessLogPage, Provider } from "@agentnet/contracts";
import { type GenerateContentResponse, GoogleGenAI, type GoogleGenAIOptions } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Account, clearOfHourEnd, configure, readUntil } from "../setup";
import { type Stack, startStack } from "../stack";
import type { SeenRequest } from "../upstream";
import { FakeGoogle, type GeminiUsage } from "../vendors/google";
import { runGeminiCli } from "./gemini-cli";

const GEMINI_KEY = "gemini-provider-key";
const VERTEX_TOKEN = "ya29.vertex-provider-access-token";
const PROJECT = "agn-project";
const LOCATION = "us-central1";
const MODEL = "gemini-2.5-flash";
/** gemini-2.5-flash in the catalog (gemini_api and vertex_api alike), USD per million tokens. */
const RATES = { input: 0.3, cached_input: 0.03, output: 2.5 };

/** A prompt with a cached part and tool results, an answer with thinking. */
const USAGE: GeminiUsage = {
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

let stack: Stack;
let google: FakeGoogle;
let googleUrl: string;
beforeAll(async () => {
  google = new FakeGoogle({ apiKey: GEMINI_KEY, acceptsBearer: (token) => token === VERTEX_TOKEN });
  googleUrl = await google.start();
  stack = await startStack({
    telemetry: true,
    proxy: { allowedPrivateUpstreams: [new URL(googleUrl).host] },
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await google?.stop();
});
// The token cap's window is a day: no test straddles its end (an hour's end is the safe bound).
beforeEach(() => clearOfHourEnd(), 30_000);
beforeEach(() => {
  google.geminiUsage = { ...USAGE };
  google.reply = "Hello from Gemini";
});

type Kind = "gemini_api" | "vertex_api";

/**
 * A fresh account whose one policy grants one Google provider at the fake vendor, under a daily
 * token cap per user (generous unless said).
 */
async function googleAccount(kind: Kind, userCap = 100_000_000) {
  const account = await stack.newAccount();
  const provider = await account.must(
    stack.api<Provider>(
      "POST",
      "/agent-network/providers",
      account.token,
      kind === "gemini_api"
        ? { provider_id: "gemini_api", name: "Gemini", upstream_url: googleUrl, api_key: GEMINI_KEY }
        : {
            provider_id: "vertex_api",
            name: "Vertex",
            upstream_url: `${googleUrl}/v1/projects/${PROJECT}/locations/${LOCATION}`,
            api_key: VERTEX_TOKEN,
          },
    ),
  );
  const setup = configure(stack, account);
  await setup.policy([provider.id]);
  await setup.budgetRule({
    token_limit: { enabled: true, group_cap: 0, user_cap: userCap, window_seconds: 86_400 },
  });
  return { account, provider, seenBefore: google.seen.length };
}

/** The account's access-log rows once `count` are stored, and a moment more for any extra row. */
async function rows(account: Account, count: number): Promise<AccessLogEntry[]> {
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

/** The row every request of the fixed usage gets: allowed, the vendor's counts, priced by hand. */
function expectPricedRow(row: AccessLogEntry | undefined, provider: Provider, stream: boolean) {
  expect(row).toMatchObject({
    decision: "allow",
    status_code: 200,
    resolved_provider_id: provider.id,
    model: MODEL,
    stream,
    ...EXPECTED_ROW,
  });
  expect(row?.cost_usd).toBeCloseTo(EXPECTED_COST, 9);
}

/** The vendor saw the provider's credential on every request, and the agentnet token nowhere. */
function expectProviderCredential(seen: SeenRequest[], kind: Kind, token: string) {
  expect(seen.length).toBeGreaterThan(0);
  for (const request of seen) {
    if (kind === "gemini_api") expect(request.headers["x-goog-api-key"]).toBe(GEMINI_KEY);
    else expect(request.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
    expect(JSON.stringify([request.headers, request.query, request.body])).not.toContain(token);
  }
}

const genai = (token: string) =>
  new GoogleGenAI({ apiKey: token, httpOptions: { baseUrl: stack.proxy.url } });

/** Reads a stream to its end: the text it said and its last chunk. */
async function drain(stream: AsyncGenerator<GenerateContentResponse>) {
  let text = "";
  let last: GenerateContentResponse | undefined;
  for await (const chunk of stream) {
    text += chunk.text ?? "";
    last = chunk;
  }
  return { text, last };
}

describe.each<Kind>(["gemini_api", "vertex_api"])(
  "@google/genai on the Gemini API's paths, a %s provider",
  (kind) => {
    it("generateContent: the vendor's answer, one row with its counts and cost", async () => {
      const { account, provider, seenBefore } = await googleAccount(kind);

      const answer = await genai(account.token).models.generateContent({ model: MODEL, contents: "say hi" });

      expect(answer.text).toBe(google.reply);
      const seen = google.seen.slice(seenBefore);
      expect(seen.map((request) => request.path)).toEqual([
        kind === "gemini_api"
          ? `/v1/models/${MODEL}:generateContent`
          : `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${MODEL}:generateContent`,
      ]);
      expectProviderCredential(seen, kind, account.token);
      const [row, ...more] = await rows(account, 1);
      expect(more).toEqual([]);
      expectPricedRow(row, provider, false);
    });

    it("generateContentStream: the vendor's text chunk by chunk, one row with its counts and cost", async () => {
      const { account, provider, seenBefore } = await googleAccount(kind);
      google.reply = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");

      const { text, last } = await drain(
        await genai(account.token).models.generateContentStream({ model: MODEL, contents: "say hi" }),
      );

      expect(text).toBe(google.reply);
      expect(last?.candidates?.[0]?.finishReason).toBe("STOP");
      const seen = google.seen.slice(seenBefore);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.path).toMatch(/:streamGenerateContent$/);
      expect(seen[0]?.query).toBe("alt=sse");
      expectProviderCredential(seen, kind, account.token);
      const [row, ...more] = await rows(account, 1);
      expect(more).toEqual([]);
      expectPricedRow(row, provider, true);
    });
  },
);

type AuthClient = NonNullable<GoogleGenAIOptions["googleAuthOptions"]>["authClient"];

/**
 * Google's auth client as the SDK's Vertex mode uses it, holding the agentnet token: the SDK asks
 * it for its request headers and sends them (google-auth-library is not ours to import, and its
 * clients would look for Google credentials on this machine).
 */
const agentnetBearer = (token: string) =>
  ({
    getRequestHeaders: async () => new Headers({ authorization: `Bearer ${token}` }),
  }) as unknown as AuthClient;

describe("@google/genai in Vertex mode, a vertex_api provider", () => {
  const vertexPath = (method: string) =>
    `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${MODEL}:${method}`;

  it("with a project and location and the token as a bearer: generateContentStream", async () => {
    const { account, provider, seenBefore } = await googleAccount("vertex_api");
    const ai = new GoogleGenAI({
      vertexai: true,
      project: "client-project",
      location: "europe-west4",
      httpOptions: { baseUrl: stack.proxy.url },
      googleAuthOptions: { authClient: agentnetBearer(account.token) },
    });

    const { text, last } = await drain(
      await ai.models.generateContentStream({ model: MODEL, contents: "say hi" }),
    );

    expect(text).toBe(google.reply);
    expect(last?.candidates?.[0]?.finishReason).toBe("STOP");
    const seen = google.seen.slice(seenBefore);
    // The provider's project and location, not the client's.
    expect(seen.map((request) => [request.path, request.query])).toEqual([
      [vertexPath("streamGenerateContent"), "alt=sse"],
    ]);
    expectProviderCredential(seen, "vertex_api", account.token);
    const [row, ...more] = await rows(account, 1);
    expect(more).toEqual([]);
    expectPricedRow(row, provider, true);
  });

  it("in express mode (an API key, no project): generateContent", async () => {
    const { account, provider, seenBefore } = await googleAccount("vertex_api");
    const ai = new GoogleGenAI({
      vertexai: true,
      apiKey: account.token,
      httpOptions: { baseUrl: stack.proxy.url },
    });

    const answer = await ai.models.generateContent({ model: MODEL, contents: "say hi" });

    expect(answer.text).toBe(google.reply);
    const seen = google.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual([vertexPath("generateContent")]);
    expectProviderCredential(seen, "vertex_api", account.token);
    const [row, ...more] = await rows(account, 1);
    expect(more).toEqual([]);
    expectPricedRow(row, provider, false);
  });
});

describe("the Gemini API's other calls, a gemini_api provider", () => {
  const listed = async (ai: GoogleGenAI) => {
    const names: string[] = [];
    for await (const model of await ai.models.list()) names.push(model.name ?? "");
    return names;
  };

  it("lists the models the caller may use at GET /v1beta/models (models.list)", async () => {
    const { account } = await googleAccount("gemini_api");
    const ai = new GoogleGenAI({
      apiKey: account.token,
      apiVersion: "v1beta",
      httpOptions: { baseUrl: stack.proxy.url },
    });
    expect(await listed(ai)).toContain(`models/${MODEL}`);
  });

  // Fails today: the SDK's default version lists at GET /v1/models, where the proxy answers the
  // OpenAI list, empty for Gemini providers (`{"object":"list","data":[]}`), even with x-goog-api-key.
  it.fails("lists the models at GET /v1/models, the SDK's default version", async () => {
    const { account } = await googleAccount("gemini_api");
    expect(await listed(genai(account.token))).toContain(`models/${MODEL}`);
  });

  it("counts tokens at the vendor (countTokens)", async () => {
    const { account, seenBefore } = await googleAccount("gemini_api");
    const counted = await genai(account.token).models.countTokens({ model: MODEL, contents: "say hi" });
    expect(counted.totalTokens).toBe(USAGE.promptTokenCount);
    const seen = google.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual([expect.stringMatching(/:countTokens$/)]);
    expectProviderCredential(seen, "gemini_api", account.token);
  });

  it("streams a JSON array without alt=sse, the token in ?key=, which the vendor never sees", async () => {
    const { account, provider, seenBefore } = await googleAccount("gemini_api");
    google.reply = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");

    const response = await fetch(
      `${stack.proxy.url}/v1beta/models/${MODEL}:streamGenerateContent?key=${account.token}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "say hi" }] }] }),
      },
    );

    expect(response.status).toBe(200);
    const chunks = (await response.json()) as GenerateContentResponse[];
    const texts = chunks.map((chunk) => chunk.candidates?.[0]?.content?.parts?.[0]?.text ?? "");
    expect(texts.join("")).toBe(google.reply);
    expect(chunks.length).toBeGreaterThan(1);
    const seen = google.seen.slice(seenBefore);
    expect(seen.map((request) => [request.path, request.query])).toEqual([
      [`/v1beta/models/${MODEL}:streamGenerateContent`, ""],
    ]);
    expectProviderCredential(seen, "gemini_api", account.token);
    const [row, ...more] = await rows(account, 1);
    expect(more).toEqual([]);
    expectPricedRow(row, provider, true);
  });

  it("refuses a token it does not know in Google's error shape, before the vendor", async () => {
    const seenBefore = google.seen.length;
    const refused = await genai("agn_not-a-token")
      .models.generateContent({ model: MODEL, contents: "say hi" })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 401 });
    const body = JSON.parse(String((refused as Error).message).replace(/^[^{]*/, "")) as unknown;
    expect(body).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
    expect(google.seen.length).toBe(seenBefore);
  });
});

describe("Gemini CLI (the real CLI) with the gateway as its base URL", () => {
  it("prints the vendor's text; each request it made is one priced row", async () => {
    const { account, provider, seenBefore } = await googleAccount("gemini_api");
    google.reply = "Hello from the Gemini CLI test.";

    const run = await runGeminiCli({
      baseUrl: stack.proxy.url,
      token: account.token,
      prompt: "say hi",
      timeoutMs: 120_000,
    });

    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(google.reply);
    const seen = google.seen.slice(seenBefore);
    expect(seen.map((request) => `${request.path}?${request.query}`)).toContain(
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
    );
    expectProviderCredential(seen, "gemini_api", account.token);
    const found = await rows(account, seen.length);
    expect(found).toHaveLength(seen.length);
    for (const row of found) expectPricedRow(row, provider, true);
  }, 180_000);
});

describe("a Gemini stream cut at a token cap", () => {
  it("ends without an error, its last chunk finishing with MAX_TOKENS", async () => {
    const cap = 3_000;
    const { account } = await googleAccount("gemini_api", cap);
    google.geminiUsage = {
      ...USAGE,
      promptTokenCount: 50,
      cachedContentTokenCount: 0,
      toolUsePromptTokenCount: 0,
    };
    google.geminiUsage.candidatesTokenCount = 20_000;
    google.reply = Array.from({ length: 10_000 }, (_, i) => `w${i % 10}`).join(" ");

    const { text, last } = await drain(
      await genai(account.token).models.generateContentStream({ model: MODEL, contents: "write" }),
    );

    expect(last?.candidates?.[0]?.finishReason).toBe("MAX_TOKENS");
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(google.reply.length);
    const [row, ...more] = await rows(account, 1);
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      decision: "allow",
      status_code: 200,
      deny_reason: "budget_rule.token_cap_exceeded",
      stream: true,
    });
  });
});
