import { Events, type GatewayRequestEvent, ProxyHeartbeat } from "@agentnet/contracts";
import { eventually } from "@agentnet/testkit";
import OpenAI from "openai";
import { Agent } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { scrape, total } from "../metrics";
import { startProxyProcess } from "../proxy-process";
import { clearOfHourEnd, configure, userCounter } from "../setup";
import { type Stack, startStack } from "../stack";

/**
 * One proxy process of two workers (`AGN_PROXY_WORKERS=2`) sharing its port: each worker a proxy
 * of its own on the bus, caps exact across them, metrics summed, and a stop that drains both.
 */
let stack: Stack;
let workers: Awaited<ReturnType<typeof startProxyProcess>>;
beforeAll(async () => {
  stack = await startStack();
  workers = await startProxyProcess(stack.vendorUpstreams, {
    AGN_PROXY_WORKERS: "2",
    AGN_METRICS_PORT: "0",
    AGN_PROXY_HEARTBEAT_SECONDS: "0.2",
  });
});
afterAll(async () => {
  await workers?.crash();
  await stack?.stop();
});
// Counters are per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);

/** ~105 prompt tokens by the proxy's estimate; the fake vendor reports 100 in, 20 out. */
const PROMPT = "p".repeat(400);
const served = (events: GatewayRequestEvent[]) => events.filter((event) => event.status_code === 200);

/**
 * A client on connections of its own, as a separate agent is: the workers share out connections,
 * and clients of one process share a keep-alive pool otherwise.
 */
const agentClient = (token: string, options: { timeout?: number; maxRetries: number }) =>
  new OpenAI({
    apiKey: token,
    baseURL: `${workers.url}/v1`,
    ...options,
    fetchOptions: { dispatcher: new Agent() },
  });

/** The proxies whose heartbeats name `endpoint`: those that served its account lately. */
function proxiesServing(endpoint: string) {
  const seen = new Set<string>();
  const subscription = stack.nc.subscribe(Events.proxyHeartbeat, {
    callback: (_error, message) => {
      const heartbeat = ProxyHeartbeat.safeParse(message.json());
      if (heartbeat.success && heartbeat.data.endpoints.includes(endpoint)) seen.add(heartbeat.data.proxy_id);
    },
  });
  return { seen, stop: () => subscription.unsubscribe() };
}

describe("a proxy process of two workers", () => {
  it("serves from both on one port, with a token cap exact across them and its metrics summed", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    await setup.policy([account.openaiProvider.id]);
    await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 1_500, window_seconds: 3600 },
    });
    stack.openai.usage = { input: 100, output: 20, cached: 0, creation: 0 };
    const heartbeats = proxiesServing(account.endpoint);
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () =>
        agentClient(account.token, { maxRetries: 0 }).chat.completions.create({
          model: "gpt-4o",
          messages: [{ role: "user", content: PROMPT }],
          max_tokens: 30,
        }),
      ),
    );
    const answered = results.filter((result) => result.status === "fulfilled").length;
    const events = await account.events.waitFor(40);
    const ok = served(events);
    expect(ok).toHaveLength(answered);
    expect(answered).toBeGreaterThan(3);
    expect(events.filter((e) => e.status_code !== 200).every((e) => e.status_code === 429)).toBe(true);
    expect(ok.reduce((total, e) => total + e.input_tokens + e.output_tokens, 0)).toBeLessThanOrEqual(1_500);
    await eventually(async () => (await userCounter(stack, account.token))?.tokens_input === 100 * answered);
    // Both workers served the account: each names its endpoint in its heartbeat.
    await eventually(() => heartbeats.seen.size === 2, 5_000);
    heartbeats.stop();

    // One scrape of the primary: both workers' requests.
    const requests = total(await scrape(workers.metricsUrl ?? ""), "agentnet_proxy_requests_total");
    expect(requests).toBe(40);
  });

  it("starts another worker in place of one killed, and serves meanwhile from the other", {
    timeout: 60_000,
  }, async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const pids = workers.readyLine.worker_pids as number[];
    expect(pids).toHaveLength(2);
    process.kill(pids[0] as number, "SIGKILL");
    // A connection handed to the dead worker before the primary saw it die is lost: the client
    // times out and retries, as clients do.
    const ask = () =>
      agentClient(account.token, { timeout: 3_000, maxRetries: 3 }).chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
      });
    expect((await ask()).choices[0]?.message.content).toBe(stack.openai.reply);
    // Two proxies serve the account again: the survivor and the one started in place of the dead.
    const heartbeats = proxiesServing(account.endpoint);
    await eventually(async () => {
      await Promise.all(Array.from({ length: 4 }, () => ask()));
      return heartbeats.seen.size === 2;
    }, 15_000);
    heartbeats.stop();
  });

  it("drains both workers' open streams on SIGTERM, then exits 0", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const heartbeats = proxiesServing(account.endpoint);
    stack.openai.holdStream = true;
    const seenBefore = stack.openai.seen.length;
    const streams = Array.from({ length: 4 }, async () => {
      const stream = await agentClient(account.token, { maxRetries: 0 }).chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      return text;
    });
    await eventually(() => stack.openai.seen.length >= seenBefore + 4);
    await eventually(() => heartbeats.seen.size === 2, 5_000);
    heartbeats.stop();

    const exited = workers.stop();
    let exitCode: number | null | undefined;
    void exited.then((code) => {
      exitCode = code;
    });
    // Draining: the streams are still open, so the process stays.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(exitCode).toBeUndefined();
    stack.openai.holdStream = false;
    stack.openai.release();
    for (const text of await Promise.all(streams)) expect(text).toBe(stack.openai.reply);
    expect(await exited).toBe(0);
    expect(served(await account.events.waitFor(4))).toHaveLength(4);
  });
});
