import type { AccessLogEntry, AccessLogSessionPage, Provider, UsageSeriesBucket } from "@agentnet/contracts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { overloaded, unavailable } from "../failing-vendor";
import { anthropicClient, clearOfHourEnd, openaiClient } from "../setup";
import {
  counterOnceCharged,
  type RoutingStack,
  rowsOnceStored,
  startRoutingStack,
  usageByProvider,
} from "./routing-stack";

let routing: RoutingStack;
beforeAll(async () => {
  routing = await startRoutingStack();
});
afterAll(() => routing?.stop());
// Counters are per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);
beforeEach(() => {
  routing.failing.openai.recover();
  routing.failing.anthropic.recover();
});

const usage = { input: 100, output: 20, cached: 0, creation: 0 };

/** Attempts of a row at one provider. */
const attemptsAt = (row: AccessLogEntry, provider: Provider) =>
  (row.attempts ?? []).filter((attempt) => attempt.provider_id === provider.id);

/**
 * Every row was answered by `second` with its usage, and lists as attempts each failure at `first`
 * before the answer: as many as the failing vendor saw (a provider cooling down is skipped, so
 * later requests may take one attempt).
 */
function expectAnsweredBySecond(
  rows: AccessLogEntry[],
  first: Provider,
  second: Provider,
  failuresAtFirst: number,
  firstStatus: number,
) {
  for (const row of rows) {
    expect(row).toMatchObject({
      decision: "allow",
      status_code: 200,
      resolved_provider_id: second.id,
      provider: second.name,
      input_tokens: usage.input,
      output_tokens: usage.output,
    });
    for (const attempt of attemptsAt(row, first)) expect(attempt.status).toBe(firstStatus);
    if (row.attempts) expect(row.attempts.at(-1)).toMatchObject({ provider_id: second.id, status: 200 });
  }
  expect(rows.reduce((sum, row) => sum + attemptsAt(row, first).length, 0)).toBe(failuresAtFirst);
  // The first request found the first provider healthy as far as the proxy knew: it tried it.
  expect(rows[0]?.attempts?.map((attempt) => attempt.provider_id)).toEqual([first.id, second.id]);
}

describe("a failure before the first byte falls back to the policy's next provider", () => {
  it("answers 20 OpenAI-format requests whose first provider answers 503, each counted once", async () => {
    const { account, first, second } = await routing.twoProviders("openai");
    routing.healthy.openai.usage = usage;
    routing.failing.openai.failAlways(unavailable);
    const client = openaiClient(routing.stack, account.token);
    const failedBefore = routing.failing.openai.failed;

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client.chat.completions.create(
          { model: "gpt-4o", messages: [{ role: "user", content: `q${i}` }] },
          { headers: { "x-session-id": "fallback-session" } },
        ),
      ),
    );
    for (const answer of answers)
      expect(answer.choices[0]?.message.content).toBe(routing.healthy.openai.reply);

    const { rows, total } = await rowsOnceStored(routing, account, 20);
    expect(total).toBe(20);
    expectAnsweredBySecond(rows, first, second, routing.failing.openai.failed - failedBefore, 503);
    // gpt-4o: 100 × $2.50/M + 20 × $10/M, per request, once.
    expect(rows.map((row) => row.cost_usd)).toEqual(Array(20).fill(0.00045));
    expect(await usageByProvider(routing, account, 20)).toEqual([
      { key: second.id, requests: 20, total_tokens: 2_400, cost_usd: 0.009 },
    ]);
    expect(await counterOnceCharged(routing, account, 2_000)).toMatchObject({
      tokens_input: 2_000,
      tokens_output: 400,
      cost_usd: expect.closeTo(0.009, 9),
    });
    // Sessions and analytics count requests, not attempts.
    const sessions = await account.must(
      routing.stack.api<AccessLogSessionPage>("GET", "/agent-network/access-log-sessions", account.token),
    );
    expect(sessions.data.map((session) => [session.session_id, session.request_count])).toEqual([
      ["fallback-session", 20],
    ]);
    const series = await account.must(
      routing.stack.api<UsageSeriesBucket[]>(
        "GET",
        "/agent-network/usage/series?granularity=day",
        account.token,
      ),
    );
    expect(series.map((bucket) => [bucket.requests, bucket.errors])).toEqual([[20, 0]]);
  });

  it("answers 10 Anthropic-format requests whose first provider is overloaded (529)", async () => {
    const { account, first, second } = await routing.twoProviders("anthropic");
    routing.healthy.anthropic.usage = usage;
    routing.failing.anthropic.failAlways(overloaded);
    const client = anthropicClient(routing.stack, account.token);
    const failedBefore = routing.failing.anthropic.failed;

    for (let i = 0; i < 10; i++) {
      const answer = await client.messages.create({
        model: "claude-sonnet-4-6",
        max_tokens: 100,
        messages: [{ role: "user", content: `q${i}` }],
      });
      expect(answer.content).toEqual([{ type: "text", text: routing.healthy.anthropic.reply }]);
    }

    const { rows, total } = await rowsOnceStored(routing, account, 10);
    expect(total).toBe(10);
    expectAnsweredBySecond(rows, first, second, routing.failing.anthropic.failed - failedBefore, 529);
    // claude-sonnet-4-6: 100 × $3/M + 20 × $15/M per request.
    expect(await usageByProvider(routing, account, 10)).toEqual([
      { key: second.id, requests: 10, total_tokens: 1_200, cost_usd: 0.006 },
    ]);
    expect(await counterOnceCharged(routing, account, 1_000)).toMatchObject({
      tokens_input: 1_000,
      tokens_output: 200,
      cost_usd: expect.closeTo(0.006, 9),
    });
  });

  it("answers 10 requests whose first provider refuses the connection, listing the refusal", async () => {
    const { account, first, second } = await routing.twoProviders("openai", { firstUrl: routing.refusedUrl });
    routing.healthy.openai.usage = usage;
    const client = openaiClient(routing.stack, account.token);

    for (let i = 0; i < 10; i++) {
      const answer = await client.chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: `q${i}` }],
      });
      expect(answer.choices[0]?.message.content).toBe(routing.healthy.openai.reply);
    }

    const { rows, total } = await rowsOnceStored(routing, account, 10);
    expect(total).toBe(10);
    const refusals = rows.reduce((sum, row) => sum + attemptsAt(row, first).length, 0);
    expectAnsweredBySecond(rows, first, second, refusals, 0);
    expect(attemptsAt(rows[0] as AccessLogEntry, first)[0]?.error).not.toBe("");
    expect(await counterOnceCharged(routing, account, 1_000)).toMatchObject({
      tokens_input: 1_000,
      tokens_output: 200,
    });
  });

  it("falls back on a 429 with retry-after and answers the client at once", async () => {
    const { account, first, second } = await routing.twoProviders("anthropic");
    routing.healthy.anthropic.usage = usage;
    routing.failing.anthropic.failNext(1, { kind: "status", status: 429, retryAfterSeconds: 30 });
    const client = anthropicClient(routing.stack, account.token);

    const startedAt = Date.now();
    const answer = await client.messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 100,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(answer.content).toEqual([{ type: "text", text: routing.healthy.anthropic.reply }]);
    // The other provider is tried at once: the vendor's 30 s are the limited provider's.
    expect(Date.now() - startedAt).toBeLessThan(10_000);

    const { rows } = await rowsOnceStored(routing, account, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.attempts?.map((attempt) => [attempt.provider_id, attempt.status])).toEqual([
      [first.id, 429],
      [second.id, 200],
    ]);
  });

  it("does not retry a 400: the client gets the vendor's refusal from the first provider", async () => {
    const { account, first } = await routing.twoProviders("openai");
    routing.failing.openai.failNext(1, { kind: "status", status: 400 });
    const seenByHealthy = routing.healthy.openai.seen.length;
    const client = openaiClient(routing.stack, account.token);

    await expect(
      client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "bad" }] }),
    ).rejects.toMatchObject({ status: 400 });
    expect(routing.healthy.openai.seen.length).toBe(seenByHealthy);
    const { rows } = await rowsOnceStored(routing, account, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status_code: 400, resolved_provider_id: first.id });
  });

  it("sends the next provider the caller's body with its own edits only: none of the failed one's metadata", async () => {
    const { account, first, second } = await routing.twoProviders("openai");
    await account.must(
      routing.stack.api("PUT", `/agent-network/providers/${second.id}`, account.token, {
        provider_id: second.provider_id,
        name: second.name,
        upstream_url: second.upstream_url,
        metadata_disabled: true,
      }),
    );
    routing.failing.openai.failNext(1, unavailable);
    const seenByFailing = routing.failing.openai.seen.length;
    const sent = '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}';

    const response = await fetch(`${routing.stack.proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.token}`, "content-type": "application/json" },
      body: sent,
    });

    expect(response.status).toBe(200);
    const user = JSON.stringify(account.owner.user_id);
    expect(routing.failing.openai.seen.slice(seenByFailing).map((seen) => seen.text)).toEqual([
      `${sent.slice(0, -1)},"user":${user}}`,
    ]);
    expect(routing.healthy.openai.last?.text).toBe(sent);
    const { rows } = await rowsOnceStored(routing, account, 1);
    expect(rows[0]?.attempts?.map((attempt) => attempt.provider_id)).toEqual([first.id, second.id]);
  });
});
