import type { AccessLogPage } from "@agentnet/contracts";
import { eventually, uniqueId } from "@agentnet/testkit";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Series, scrape, total } from "../metrics";
import { startProxyProcess } from "../proxy-process";
import {
  type Account,
  anthropicClient,
  clearOfHourEnd,
  configure,
  openaiClient,
  readUntil,
  userCounter,
} from "../setup";
import { type Stack, startStack } from "../stack";

let stack: Stack;
let urls: NonNullable<Stack["metricsUrls"]>;
beforeAll(async () => {
  stack = await startStack({ metrics: true, telemetry: true });
  urls = stack.metricsUrls as NonNullable<Stack["metricsUrls"]>;
});
afterAll(async () => {
  await stack?.stop();
});
// The cap refusal below is per window: the test must not straddle an hour's end.
beforeEach(() => clearOfHourEnd(), 30_000);

/** How much each series of `name` grew between two scrapes, by its labels; only those that grew. */
function growth(before: Map<string, Series[]>, after: Map<string, Series[]>, name: string) {
  const key = (series: Series) => JSON.stringify(Object.entries(series.labels).sort());
  const earlier = new Map((before.get(name) ?? []).map((series) => [key(series), series]));
  return (after.get(name) ?? [])
    .map((series) => {
      const was = earlier.get(key(series));
      const by = (series.value ?? series.count ?? 0) - (was?.value ?? was?.count ?? 0);
      return { labels: series.labels, by };
    })
    .filter((series) => series.by !== 0);
}

/** Every label value of every series in a scrape. */
const labelValues = (scraped: Map<string, Series[]>) =>
  [...scraped.values()].flat().flatMap((series) => Object.values(series.labels));

/** What identifies the account's tenants, callers and requests: none may be a label value. */
function identifiers(account: Account, extra: string[]) {
  return [
    account.owner.account_id,
    account.owner.user_id,
    account.owner.email,
    account.token,
    account.openaiProvider.id,
    account.anthropicProvider.id,
    ...account.owner.group_ids,
    ...extra,
  ];
}

describe("the gateway proxy's /metrics", () => {
  it("counts each request by route, provider type, catalog model, decision and status, with its tokens, cost and cap refusal", async () => {
    const account = await stack.newAccount();
    const setup = configure(stack, account);
    const policy = await setup.policy([account.openaiProvider.id]);
    const rule = await setup.budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 1_000, window_seconds: 3600 },
    });
    stack.openai.usage = { input: 600, output: 200, cached: 0, creation: 0 };
    const before = await scrape(urls.proxy);

    const sessionId = uniqueId("session");
    const privateModel = uniqueId("ft:gpt-4o-mini:acme");
    const openai = openaiClient(stack, account.token);
    const ask = (model: string) =>
      openai.chat.completions.create(
        { model, messages: [{ role: "user", content: "hi" }], max_tokens: 300 },
        { headers: { "x-session-id": sessionId } },
      );
    await ask("gpt-4o");
    await eventually(async () => (await userCounter(stack, account.token))?.tokens_input === 600);
    // 800 used + the next request's worst case passes the 1,000-token cap.
    await expect(ask("gpt-4o")).rejects.toMatchObject({ status: 429 });
    // No policy grants the Anthropic provider: refused before any provider is chosen.
    await expect(
      anthropicClient(stack, account.token).messages.create({
        model: "claude-haiku-4-5",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({ status: 403 });
    // Refused before the account is known: no request event, only an answer.
    await expect(
      openaiClient(stack, "agn_not-a-token").chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({ status: 401 });
    const events = await account.events.waitFor(3);
    const after = await scrape(urls.proxy);

    expect(growth(before, after, "agentnet_proxy_requests_total")).toEqual(
      expect.arrayContaining([
        {
          labels: expect.objectContaining({
            route: "/v1/chat/completions",
            provider: "openai_api",
            model: "gpt-4o",
            decision: "allow",
            code: "200",
            service: "gateway-proxy",
          }),
          by: 1,
        },
        {
          labels: expect.objectContaining({
            route: "/v1/chat/completions",
            provider: "openai_api",
            model: "gpt-4o",
            decision: "deny",
            code: "429",
          }),
          by: 1,
        },
        {
          labels: expect.objectContaining({
            route: "/v1/messages",
            provider: "none",
            model: "other",
            decision: "deny",
            code: "403",
          }),
          by: 1,
        },
      ]),
    );
    // Exactly the requests sent of a configured account: one per request event.
    expect(
      total(after, "agentnet_proxy_requests_total") - total(before, "agentnet_proxy_requests_total"),
    ).toBe(3);
    expect(
      total(after, "agentnet_proxy_http_responses_total") -
        total(before, "agentnet_proxy_http_responses_total"),
    ).toBe(4);
    expect(growth(before, after, "agentnet_proxy_http_responses_total")).toContainEqual({
      labels: expect.objectContaining({ route: "/v1/chat/completions", code: "401" }),
      by: 1,
    });

    const tokens = (type: string) =>
      total(after, "agentnet_proxy_tokens_total", { provider: "openai_api", model: "gpt-4o", type }) -
      total(before, "agentnet_proxy_tokens_total", { provider: "openai_api", model: "gpt-4o", type });
    expect([tokens("input"), tokens("cached_input"), tokens("cache_creation"), tokens("output")]).toEqual([
      600, 0, 0, 200,
    ]);
    const cost =
      total(after, "agentnet_proxy_cost_usd_total", { provider: "openai_api", model: "gpt-4o" }) -
      total(before, "agentnet_proxy_cost_usd_total", { provider: "openai_api", model: "gpt-4o" });
    expect(cost).toBeCloseTo(events[0]?.cost_usd ?? Number.NaN, 9);
    expect(growth(before, after, "agentnet_proxy_cap_refusals_total")).toEqual([
      {
        labels: expect.objectContaining({ reason: "budget_rule.token_cap_exceeded", stage: "admission" }),
        by: 1,
      },
    ]);
    expect(
      total(after, "agentnet_proxy_lease_asks_total", { kind: "grow" }) -
        total(before, "agentnet_proxy_lease_asks_total", { kind: "grow" }),
    ).toBeGreaterThanOrEqual(1);

    // Upstream latency and time to the first byte: histograms with their buckets.
    for (const name of [
      "agentnet_proxy_upstream_duration_seconds",
      "agentnet_proxy_upstream_first_byte_seconds",
    ]) {
      const series = after
        .get(name)
        ?.find((one) => one.labels.model === "gpt-4o" && one.labels.stream === "false");
      expect(series?.buckets?.["+Inf"]).toBe(series?.count);
      expect(Object.keys(series?.buckets ?? {}).length).toBeGreaterThan(10);
      expect(growth(before, after, name)).toContainEqual({ labels: series?.labels, by: 1 });
    }
    // The event pipeline, read from the publisher's own counts.
    expect(
      total(after, "agentnet_proxy_events_published_total") -
        total(before, "agentnet_proxy_events_published_total"),
    ).toBeGreaterThanOrEqual(2);
    expect(after.get("agentnet_proxy_events_buffered")?.[0]?.value).toBeGreaterThanOrEqual(0);
    expect(total(after, "agentnet_proxy_events_publish_failing")).toBe(0);
    // Bus requests, by catalog subject.
    expect(
      after
        .get("agentnet_bus_request_duration_seconds")
        ?.find((one) => one.labels.subject === "agn.ctl.auth.resolve")?.buckets,
    ).toBeDefined();

    const values = labelValues(after);
    for (const id of identifiers(account, [
      sessionId,
      privateModel,
      policy.id,
      rule.id,
      events[0]?.id ?? "",
    ])) {
      expect(values.filter((value) => value.includes(id))).toEqual([]);
    }
  });

  it("labels a model its provider's catalog does not know as other, never by its name", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const privateModel = uniqueId("ft-acme-private");
    const before = await scrape(urls.proxy);
    await openaiClient(stack, account.token).chat.completions.create({
      model: privateModel,
      messages: [{ role: "user", content: "hi" }],
    });
    await account.events.waitFor(1);
    const after = await scrape(urls.proxy);

    expect(growth(before, after, "agentnet_proxy_requests_total")).toEqual([
      {
        labels: expect.objectContaining({
          provider: "openai_api",
          model: "other",
          decision: "allow",
          code: "200",
        }),
        by: 1,
      },
    ]);
    expect(labelValues(after).filter((value) => value.includes(privateModel))).toEqual([]);
  });
});

describe("a proxy started as deployed (its main, AGN_METRICS_PORT)", () => {
  it("serves its metrics on that port, its requests and its bus requests counted, and nothing on its own", async () => {
    const proxy = await startProxyProcess(stack.vendorUpstreams, { AGN_METRICS_PORT: "0" });
    try {
      expect(proxy.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const account = await stack.newAccount();
      await configure(stack, account).policy([account.openaiProvider.id]);
      const openai = new OpenAI({ apiKey: account.token, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
      await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
      await account.events.waitFor(1);

      const scraped = await scrape(proxy.metricsUrl as string);
      expect(
        total(scraped, "agentnet_proxy_requests_total", {
          service: "gateway-proxy",
          decision: "allow",
          code: "200",
        }),
      ).toBe(1);
      expect(
        scraped.get("agentnet_bus_request_duration_seconds")?.map((one) => one.labels.subject),
      ).toContain("agn.ctl.auth.resolve");
      expect(total(scraped, "process_cpu_seconds_total")).toBeGreaterThan(0);
      expect((await fetch(`${proxy.url}/metrics`)).status).toBe(404);
    } finally {
      await proxy.stop();
    }
  });
});

describe("the api-gateway's /metrics", () => {
  it("counts requests by route pattern, method and status, never by URL", async () => {
    const account = await stack.newAccount();
    const unknownId = uniqueId("provider");
    const before = await scrape(urls.api);
    await stack.api("GET", "/agent-network/providers", account.token);
    await stack.api("GET", "/agent-network/providers", account.token);
    expect((await stack.api("GET", `/agent-network/providers/${unknownId}`, account.token)).status).toBe(404);
    expect((await stack.api("GET", "/agent-network/providers", "agn_not-a-token")).status).toBe(401);
    const after = await scrape(urls.api);

    expect(growth(before, after, "agentnet_api_http_requests_total")).toEqual(
      expect.arrayContaining([
        {
          labels: expect.objectContaining({
            route: "/api/agent-network/providers",
            method: "GET",
            code: "200",
            service: "api-gateway",
          }),
          by: 2,
        },
        {
          labels: expect.objectContaining({ route: "/api/agent-network/providers/:providerId", code: "404" }),
          by: 1,
        },
        // Refused before routing: no route matched yet.
        { labels: expect.objectContaining({ route: "unmatched", code: "401" }), by: 1 },
      ]),
    );
    expect(
      total(after, "agentnet_api_http_requests_total") - total(before, "agentnet_api_http_requests_total"),
    ).toBe(4);
    const durations = after
      .get("agentnet_api_http_request_duration_seconds")
      ?.find((series) => series.labels.route === "/api/agent-network/providers");
    expect(durations?.buckets?.["+Inf"]).toBe(durations?.count);
    expect(after.get("agentnet_bus_request_duration_seconds")?.length).toBeGreaterThan(0);
    expect(labelValues(after).filter((value) => value.includes(unknownId))).toEqual([]);
    for (const id of identifiers(account, [])) {
      expect(labelValues(after).filter((value) => value.includes(id))).toEqual([]);
    }
  });
});

describe("telemetry's and consumption's /metrics", () => {
  it("count the events stored and settled, the consumer's backlog, each named query and the settlement lag", async () => {
    const account = await stack.newAccount();
    await configure(stack, account).policy([account.openaiProvider.id]);
    const telemetryBefore = await scrape(urls.telemetry);
    const consumptionBefore = await scrape(urls.consumption);
    const settled = async () =>
      total(await scrape(urls.consumption), "agentnet_consumption_events_settled_total") -
      total(consumptionBefore, "agentnet_consumption_events_settled_total");
    const openai = openaiClient(stack, account.token);
    for (let i = 0; i < 3; i++) {
      await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    }
    await readUntil(
      () => account.must(stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)),
      (page) => page.total_records === 3,
    );
    await eventually(async () => (await settled()) >= 3);
    const telemetry = await scrape(urls.telemetry);
    const consumption = await scrape(urls.consumption);

    expect(
      total(telemetry, "agentnet_telemetry_rows_ingested_total") -
        total(telemetryBefore, "agentnet_telemetry_rows_ingested_total"),
    ).toBeGreaterThanOrEqual(3);
    expect(
      telemetry
        .get("agentnet_telemetry_consumer_pending_messages")
        ?.map((series) => series.labels.state)
        .sort(),
    ).toEqual(["unacked", "undelivered"]);
    for (const query of ["access_log_page", "access_log_count"]) {
      const series = telemetry
        .get("agentnet_telemetry_query_duration_seconds")
        ?.find((one) => one.labels.query === query && one.labels.outcome === "ok");
      expect(series?.count).toBeGreaterThanOrEqual(1);
      expect(series?.buckets?.["+Inf"]).toBe(series?.count);
    }
    const lag = consumption.get("agentnet_consumption_settlement_lag_seconds")?.[0];
    expect(lag?.labels.service).toBe("consumption");
    expect(lag?.buckets?.["+Inf"]).toBe(lag?.count);
    expect(lag?.count).toBeGreaterThanOrEqual(3);
    const values = [...labelValues(telemetry), ...labelValues(consumption)];
    for (const id of identifiers(account, []))
      expect(values.filter((value) => value.includes(id))).toEqual([]);
  });
});
