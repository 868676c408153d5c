import OpenAI, { AzureOpenAI } from "openai";
import { describe, expect, it } from "vitest";
import { type AzureStack, DEPLOYMENT, expectAzureKey, expectAzureRow, startAzureStack } from "./azure-stack";
import { distinctWords, expectCutRow, storedRows, useWireStack } from "./wire-stack";

let azure: AzureStack;
useWireStack(startAzureStack, (started) => {
  azure = started;
});

const API_VERSION = "2024-10-21";

/** The `openai` package's Azure client, the gateway as its endpoint, the agentnet token as its key. */
const azureClient = (token: string) =>
  new AzureOpenAI({
    endpoint: azure.stack.proxy.url,
    apiKey: token,
    apiVersion: API_VERSION,
    deployment: DEPLOYMENT,
    maxRetries: 0,
  });

/** The plain OpenAI client on Azure's v1 API (`<endpoint>/openai/v1`), the deployment as its model. */
const v1Client = (token: string) =>
  new OpenAI({ baseURL: `${azure.stack.proxy.url}/openai/v1`, apiKey: token, maxRetries: 0 });

/** Reads a chat stream to its end: its text, its last finish_reason and the usage it reported. */
async function drain(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = "";
  let finish: string | null | undefined;
  let usage: OpenAI.Completions.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
    usage = chunk.usage ?? usage;
  }
  return { text, finish, usage };
}

describe("AzureOpenAI on the deployment paths, an azure_api provider", () => {
  it("chat.completions.create: the vendor's answer, one row with its counts and cost", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount();

    const answer = await azureClient(account.token).chat.completions.create({
      model: DEPLOYMENT,
      messages: [{ role: "user", content: "say hi" }],
    });

    expect(answer.choices[0]?.message.content).toBe(azure.azure.reply);
    const seen = azure.azure.seen.slice(seenBefore);
    // Azure's v1 API, the deployment as the model; api-version is not forwarded.
    expect(seen.map((request) => [request.path, request.query, request.body.model])).toEqual([
      ["/openai/v1/chat/completions", "", DEPLOYMENT],
    ]);
    expectAzureKey(seen, account.token);
    const [row, ...more] = await storedRows(azure.stack, account, 1);
    expect(more).toEqual([]);
    expectAzureRow(row, provider, false);
  });

  it("a provider written as the resource root (the portal's Endpoint) answers as the /openai/v1 one", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount({ resourceRoot: true });
    expect(provider.upstream_url).toBe(azure.azureUrl);

    const answer = await azureClient(account.token).chat.completions.create({
      model: DEPLOYMENT,
      messages: [{ role: "user", content: "say hi" }],
    });

    expect(answer.choices[0]?.message.content).toBe(azure.azure.reply);
    const seen = azure.azure.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual(["/openai/v1/chat/completions"]);
    const [row] = await storedRows(azure.stack, account, 1);
    expectAzureRow(row, provider, false);
  });

  it("a stream: the vendor's text, and its usage, which the proxy asked for", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount();
    azure.azure.reply = distinctWords(40);

    const { text, finish } = await drain(
      await azureClient(account.token).chat.completions.create({
        model: DEPLOYMENT,
        messages: [{ role: "user", content: "say hi" }],
        stream: true,
      }),
    );

    expect(text).toBe(azure.azure.reply);
    expect(finish).toBe("stop");
    const seen = azure.azure.seen.slice(seenBefore);
    expect(seen).toHaveLength(1);
    // The client asked for no usage; Azure reports it only when asked, so the proxy asks.
    expect(seen[0]?.body.stream_options).toEqual({ include_usage: true });
    expectAzureKey(seen, account.token);
    const [row, ...more] = await storedRows(azure.stack, account, 1);
    expect(more).toEqual([]);
    expectAzureRow(row, provider, true);
  });

  it("embeddings.create: the vendor's vector, one row priced as input", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount();

    const answer = await azureClient(account.token).embeddings.create({ model: DEPLOYMENT, input: "say hi" });

    expect(answer.data[0]?.embedding).toEqual([0.5, 0.25, 0.125]);
    const seen = azure.azure.seen.slice(seenBefore);
    expect(seen.map((request) => [request.path, request.body.model])).toEqual([
      ["/openai/v1/embeddings", DEPLOYMENT],
    ]);
    expectAzureKey(seen, account.token);
    const [row] = await storedRows(azure.stack, account, 1);
    // By hand: 10,000 input tokens × $0.0025/1k; an embedding has no output and reports no cache.
    expect(row).toMatchObject({
      decision: "allow",
      status_code: 200,
      resolved_provider_id: provider.id,
      model: DEPLOYMENT,
      input_tokens: 10_000,
      output_tokens: 0,
    });
    expect(row?.cost_usd).toBeCloseTo(0.025, 9);
  });

  it("a body without a model: the deployment in the path names it, the rest reaches the vendor as sent", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount();
    const sent = '{"messages": [{"role": "user", "content": "say h\\u00ed"}], "seed": 123456789012345678901}';
    const response = await fetch(
      `${azure.stack.proxy.url}/openai/deployments/${DEPLOYMENT}/chat/completions?api-version=${API_VERSION}`,
      {
        method: "POST",
        headers: { "api-key": account.token, "content-type": "application/json" },
        body: sent,
      },
    );

    expect(response.status).toBe(200);
    const seen = azure.azure.seen.slice(seenBefore);
    expect(seen.map((request) => request.body.model)).toEqual([DEPLOYMENT]);
    expect(seen[0]?.text).toBe(
      `${sent.slice(0, -1)},"user":${JSON.stringify(account.owner.user_id)},"model":${JSON.stringify(DEPLOYMENT)}}`,
    );
    const [row] = await storedRows(azure.stack, account, 1);
    expectAzureRow(row, provider, false);
  });

  // AzureOpenAI puts a deployment in the path of chat, embeddings, audio and images only: it sends
  // the Responses API to /openai/responses?api-version=…, the deployment in the body's model.
  it("responses.create: the vendor's answer at /openai/v1/responses, one row", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount();

    const answer = await azureClient(account.token).responses.create({ model: DEPLOYMENT, input: "say hi" });

    expect(answer.output_text).toBe(azure.azure.reply);
    const seen = azure.azure.seen.slice(seenBefore);
    expect(seen.map((request) => [request.path, request.body.model])).toEqual([
      ["/openai/v1/responses", DEPLOYMENT],
    ]);
    expectAzureKey(seen, account.token);
    const [row] = await storedRows(azure.stack, account, 1);
    expectAzureRow(row, provider, false);
  });
});

describe("the OpenAI client on Azure's v1 API, an azure_api provider", () => {
  it("chat.completions.create: the vendor's answer, one row with its counts and cost", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount();

    const answer = await v1Client(account.token).chat.completions.create({
      model: DEPLOYMENT,
      messages: [{ role: "user", content: "say hi" }],
    });

    expect(answer.choices[0]?.message.content).toBe(azure.azure.reply);
    const seen = azure.azure.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual(["/openai/v1/chat/completions"]);
    expectAzureKey(seen, account.token);
    const [row, ...more] = await storedRows(azure.stack, account, 1);
    expect(more).toEqual([]);
    expectAzureRow(row, provider, false);
  });

  it("a stream: the vendor's text, one row with its usage", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount();

    const { text, usage } = await drain(
      await v1Client(account.token).chat.completions.create({
        model: DEPLOYMENT,
        messages: [{ role: "user", content: "say hi" }],
        stream: true,
      }),
    );

    expect(text).toBe(azure.azure.reply);
    // The proxy asked for the usage; the client, which did not, still reads a chunk that has it.
    expect(usage?.prompt_tokens).toBe(10_000);
    expectAzureKey(azure.azure.seen.slice(seenBefore), account.token);
    const [row, ...more] = await storedRows(azure.stack, account, 1);
    expect(more).toEqual([]);
    expectAzureRow(row, provider, true);
  });

  it("responses.create: the vendor's answer, one row with its counts and cost", async () => {
    const { account, provider, seenBefore } = await azure.azureAccount();

    const answer = await v1Client(account.token).responses.create({ model: DEPLOYMENT, input: "say hi" });

    expect(answer.output_text).toBe(azure.azure.reply);
    const seen = azure.azure.seen.slice(seenBefore);
    expect(seen.map((request) => request.path)).toEqual(["/openai/v1/responses"]);
    expectAzureKey(seen, account.token);
    const [row] = await storedRows(azure.stack, account, 1);
    expectAzureRow(row, provider, false);
  });
});

describe("an AzureOpenAI stream cut at a token cap", () => {
  it("ends without an error, its last chunk finishing with length", async () => {
    const cap = 3_000;
    const { account } = await azure.azureAccount({ userCap: cap });
    azure.azure.usage = { input: 50, output: 100_000, cached: 0, creation: 0 };
    azure.azure.reply = distinctWords(10_000, "w");

    const { text, finish } = await drain(
      await azureClient(account.token).chat.completions.create({
        model: DEPLOYMENT,
        messages: [{ role: "user", content: "write" }],
        stream: true,
      }),
    );

    expect(finish).toBe("length");
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(azure.azure.reply.length);
    const [row, ...more] = await storedRows(azure.stack, account, 1);
    expect(more).toEqual([]);
    expectCutRow(row, cap);
  });
});
