import { type GenerateContentResponse, GoogleGenAI, type GoogleGenAIOptions } from "@google/genai";
import { describe, expect, it } from "vitest";
import { runGeminiCli } from "./gemini-cli";
import {
  drain,
  expectPricedRow,
  expectProviderCredential,
  type GeminiStack,
  type GoogleKind,
  LOCATION,
  MODEL,
  PROJECT,
  startGeminiStack,
  USAGE,
} from "./gemini-stack";
import { distinctWords, expectCutRow, useWireStack } from "./wire-stack";

let gemini: GeminiStack;
useWireStack(startGeminiStack, (started) => {
  gemini = started;
});

describe.each<GoogleKind>(["gemini_api", "vertex_api"])(
  "@google/genai on the Gemini API's paths, a %s provider",
  (kind) => {
    it("generateContent: the vendor's answer, one row with its counts and cost", async () => {
      const { account, provider, seenBefore } = await gemini.googleAccount(kind);

      const answer = await gemini
        .genai(account.token)
        .models.generateContent({ model: MODEL, contents: "say hi" });

      expect(answer.text).toBe(gemini.google.reply);
      const seen = gemini.google.seen.slice(seenBefore);
      expect(seen.map((request) => request.path)).toEqual([
        kind === "gemini_api"
          ? `/v1/models/${MODEL}:generateContent`
          : `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/${MODEL}:generateContent`,
      ]);
      expectProviderCredential(seen, kind, account.token);
      const [row, ...more] = await gemini.rows(account, 1);
      expect(more).toEqual([]);
      expectPricedRow(row, provider, false);
    });

    it("generateContentStream: the vendor's text chunk by chunk, one row with its counts and cost", async () => {
      const { account, provider, seenBefore } = await gemini.googleAccount(kind);
      gemini.google.reply = distinctWords(40);

      const { text, last } = await drain(
        await gemini.genai(account.token).models.generateContentStream({ model: MODEL, contents: "say hi" }),
      );

      expect(text).toBe(gemini.google.reply);
      expect(last?.candidates?.[0]?.finishReason).toBe("STOP");
      const seen = gemini.google.seen.slice(seenBefore);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.path).toMatch(/:streamGenerateContent$/);
      expect(seen[0]?.query).toBe("alt=sse");
      expectProviderCredential(seen, kind, account.token);
      const [row, ...more] = await gemini.rows(account, 1);
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
    const { account, provider, seenBefore } = await gemini.googleAccount("vertex_api");
    const ai = new GoogleGenAI({
      vertexai: true,
      project: "client-project",
      location: "europe-west4",
      httpOptions: { baseUrl: gemini.stack.proxy.url },
      googleAuthOptions: { authClient: agentnetBearer(account.token) },
    });

    const { text, last } = await drain(
      await ai.models.generateContentStream({ model: MODEL, contents: "say hi" }),
    );

    expect(text).toBe(gemini.google.reply);
    expect(last?.candidates?.[0]?.finishReason).toBe("STOP");
    const seen = gemini.google.seen.slice(seenBefore);
    // The provider's project and location, not the client's.
    expect(seen.map((request) => [request.path, request.query])).toEqual([
      [vertexPath("streamGenerateContent"), "alt=sse"],
    ]);
    expectProviderCredential(seen, "vertex_api", account.token);
    const [row, ...more] = await gemini.rows(account, 1);
    expect(more).toEqual([]);
    expectPricedRow(row, provider, true);
  });

  it("in express mode (an API key, no project): generateContent", async () => {
    const { account, provider, seenBefore } = await gemini.googleAccount("vertex_api");
    const ai = new GoogleGenAI({
      vertexai: true,
      apiKey: account.token,
      httpOptions: { baseUrl: gemini.stack.proxy.url },
    });

    const answer = await ai.models.generateContent({ model: MODEL, contents: "say hi" });

    expect(answer.text).toBe(gemini.google.reply);
    const seen = gemini.google.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual([vertexPath("generateContent")]);
    expectProviderCredential(seen, "vertex_api", account.token);
    const [row, ...more] = await gemini.rows(account, 1);
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
    const { account } = await gemini.googleAccount("gemini_api");
    const ai = new GoogleGenAI({
      apiKey: account.token,
      apiVersion: "v1beta",
      httpOptions: { baseUrl: gemini.stack.proxy.url },
    });
    expect(await listed(ai)).toContain(`models/${MODEL}`);
  });

  it("lists the models at GET /v1/models, the SDK's default version", async () => {
    const { account } = await gemini.googleAccount("gemini_api");
    expect(await listed(gemini.genai(account.token))).toContain(`models/${MODEL}`);
  });

  it("counts tokens at the vendor (countTokens)", async () => {
    const { account, seenBefore } = await gemini.googleAccount("gemini_api");
    const counted = await gemini
      .genai(account.token)
      .models.countTokens({ model: MODEL, contents: "say hi" });
    expect(counted.totalTokens).toBe(USAGE.promptTokenCount);
    const seen = gemini.google.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual([expect.stringMatching(/:countTokens$/)]);
    expectProviderCredential(seen, "gemini_api", account.token);
  });

  it("streams a JSON array without alt=sse, the token in ?key=, which the vendor never sees", async () => {
    const { account, provider, seenBefore } = await gemini.googleAccount("gemini_api");
    gemini.google.reply = distinctWords(30);
    // What re-serialising would change (spacing, integer-like keys, escapes) reaches the vendor as sent.
    const sent =
      '{ "contents": [{"role": "user", "parts": [{"text": "say h\\u00ed"}]}],\n  "tools": [{"functionDeclarations": [{"name": "pick", "parameters": {"type": "OBJECT", "properties": {"b": {"type": "STRING"}, "2": {"type": "INTEGER"}}}}]}] }';

    const response = await fetch(
      `${gemini.stack.proxy.url}/v1beta/models/${MODEL}:streamGenerateContent?key=${account.token}`,
      { method: "POST", headers: { "content-type": "application/json" }, body: sent },
    );

    expect(response.status).toBe(200);
    const chunks = (await response.json()) as GenerateContentResponse[];
    const texts = chunks.map((chunk) => chunk.candidates?.[0]?.content?.parts?.[0]?.text ?? "");
    expect(texts.join("")).toBe(gemini.google.reply);
    expect(chunks.length).toBeGreaterThan(1);
    const seen = gemini.google.seen.slice(seenBefore);
    expect(seen.map((request) => [request.path, request.query])).toEqual([
      [`/v1beta/models/${MODEL}:streamGenerateContent`, ""],
    ]);
    expect(seen[0]?.text).toBe(sent);
    expectProviderCredential(seen, "gemini_api", account.token);
    const [row, ...more] = await gemini.rows(account, 1);
    expect(more).toEqual([]);
    expectPricedRow(row, provider, true);
  });

  it("refuses a token it does not know in Google's error shape, before the vendor", async () => {
    const seenBefore = gemini.google.seen.length;
    const refused = await gemini
      .genai("agn_not-a-token")
      .models.generateContent({ model: MODEL, contents: "say hi" })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 401 });
    const body = JSON.parse(String((refused as Error).message).replace(/^[^{]*/, "")) as unknown;
    expect(body).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
    expect(gemini.google.seen.length).toBe(seenBefore);
  });
});

describe.each<GoogleKind>(["gemini_api", "vertex_api"])("identity headers to a %s provider", (kind) => {
  it("name the caller and their groups in the headers the provider sets", async () => {
    const { account, seenBefore } = await gemini.googleAccount(kind, { identity: true });

    await gemini.genai(account.token).models.generateContent({ model: MODEL, contents: "say hi" });

    const [seen] = gemini.google.seen.slice(seenBefore);
    expect(seen?.headers["x-caller"]).toBe(account.owner.email);
    expect(seen?.headers["x-caller-groups"]).toBe(account.owner.group_ids.join(","));
  });
});

describe("prompt capture on the Gemini wire", () => {
  it("captures a streamed answer's prompt and text, PII redacted", async () => {
    const { account } = await gemini.googleAccount("gemini_api", { capture: true });
    gemini.google.reply = "Sure, I will email bob@corp.example.com";

    await drain(
      await gemini.genai(account.token).models.generateContentStream({
        model: MODEL,
        contents: "Mail jane@example.com, card 4111 1111 1111 1111",
      }),
    );

    const [row] = await gemini.rows(account, 1);
    expect(row?.request_prompt).toContain("[EMAIL]");
    expect(row?.request_prompt).toContain("[CARD]");
    expect(row?.request_prompt).not.toContain("jane@example.com");
    expect(row?.response_completion).toBe("Sure, I will email [EMAIL]");
  });
});

describe("Gemini CLI (the real CLI) with the gateway as its base URL", () => {
  /** The vendor first asks the CLI to list its directory, then answers: two requests. */
  const toolThenText = () => {
    gemini.google.nextAnswers = [[{ functionCall: { name: "list_directory", args: { dir_path: "." } } }]];
    gemini.google.reply = "Hello from the Gemini CLI test.";
  };

  it("prints the vendor's text after running a tool; each request it made is one priced row", async () => {
    const { account, provider, seenBefore } = await gemini.googleAccount("gemini_api");
    toolThenText();

    const run = await runGeminiCli({
      baseUrl: gemini.stack.proxy.url,
      token: account.token,
      prompt: "list the files",
      timeoutMs: 120_000,
    });

    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(gemini.google.reply);
    const seen = gemini.google.seen.slice(seenBefore);
    expect(seen.map((request) => `${request.path}?${request.query}`)).toEqual([
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
    ]);
    // The second request carries the tool's result: the CLI ran it.
    expect(JSON.stringify(seen[1]?.body)).toContain('"functionResponse"');
    expectProviderCredential(seen, "gemini_api", account.token);
    const found = await gemini.rows(account, seen.length);
    expect(found).toHaveLength(seen.length);
    for (const row of found) expectPricedRow(row, provider, true);
    // It names no session; its requests repeat the run's first turn, which groups them.
    const [session] = found.map((row) => row.session_id);
    expect(session).toMatch(/^gemini-cli-/);
    expect(found.map((row) => row.session_id)).toEqual([session, session]);
  }, 180_000);

  it("groups its requests into one session by the x-session-id header GEMINI_CLI_CUSTOM_HEADERS adds", async () => {
    // Gemini CLI sends no session of its own with an API key (no header, no body field): a name
    // chosen for it wins over the one the gateway derives from the run's first turn.
    const { account } = await gemini.googleAccount("gemini_api");
    toolThenText();
    const session = `gemini-cli-${account.owner.account_id}`;

    const run = await runGeminiCli({
      baseUrl: gemini.stack.proxy.url,
      token: account.token,
      prompt: "list the files",
      env: { GEMINI_CLI_CUSTOM_HEADERS: `x-session-id: ${session}` },
      timeoutMs: 120_000,
    });

    expect(run.exitCode, run.stderr).toBe(0);
    const found = await gemini.rows(account, 2);
    expect(found.map((row) => row.session_id)).toEqual([session, session]);
  }, 180_000);
});

describe("a Gemini stream cut at a token cap", () => {
  /** A long answer of `words` words, far more output than the cap allows. */
  const longAnswer = (words: number) => {
    gemini.google.geminiUsage = {
      promptTokenCount: 50,
      cachedContentTokenCount: 0,
      toolUsePromptTokenCount: 0,
      candidatesTokenCount: 100_000,
      thoughtsTokenCount: 0,
    };
    // No word repeats: Gemini CLI stops an answer that loops.
    gemini.google.reply = distinctWords(words, "w");
  };

  it("ends Google's SDK's stream without an error, its last chunk finishing with MAX_TOKENS", async () => {
    const cap = 3_000;
    const { account } = await gemini.googleAccount("gemini_api", { userCap: cap });
    longAnswer(10_000);

    const { text, last } = await drain(
      await gemini.genai(account.token).models.generateContentStream({ model: MODEL, contents: "write" }),
    );

    expect(last?.candidates?.[0]?.finishReason).toBe("MAX_TOKENS");
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(gemini.google.reply.length);
    const [row, ...more] = await gemini.rows(account, 1);
    expect(more).toEqual([]);
    expectCutRow(row, cap);
  });

  it("ends Gemini CLI's answer: it prints the text so far and exits", async () => {
    // Its prompt (system instruction and tools) is some 8,000 tokens by the proxy's estimate: the
    // cap admits it with an output step or two, not the 4,096 output tokens it holds at most.
    const cap = 10_000;
    const { account } = await gemini.googleAccount("gemini_api", { userCap: cap });
    longAnswer(60_000);

    const run = await runGeminiCli({
      baseUrl: gemini.stack.proxy.url,
      token: account.token,
      prompt: "write",
      timeoutMs: 60_000,
    });

    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.length).toBeGreaterThan(0);
    expect(run.stdout.length).toBeLessThan(gemini.google.reply.length);
    const found = await gemini.rows(account, 1);
    expect(found).toHaveLength(1);
    expectCutRow(found[0], cap);
  }, 120_000);

  // Gemini writes up to the model's own limit (65,536 for 2.5 Flash) when asked for no cap, and
  // Gemini CLI sends none: the stream's hold follows it that far, not to the default output budget.
  it("cuts a stream without maxOutputTokens that writes past the cap, though the cap covers the default output budget", async () => {
    const cap = 20_000;
    const { account } = await gemini.googleAccount("gemini_api", { userCap: cap });
    longAnswer(60_000);

    const { last } = await drain(
      await gemini.genai(account.token).models.generateContentStream({ model: MODEL, contents: "write" }),
    );

    expect(last?.candidates?.[0]?.finishReason).toBe("MAX_TOKENS");
    const [row] = await gemini.rows(account, 1);
    expectCutRow(row, cap);
  });
});
