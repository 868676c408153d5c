import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchChromium, screenshot } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

interface LogPage {
  total_records: number;
}

// Half an hour off UTC: a bucket label in this zone proves the axis and table speak local time.
const TIME_ZONE = "Asia/Kolkata";
const ZONE_OFFSET_MS = 5.5 * 3_600_000;

let stack: DashboardStack;
let browser: Browser;
let page: Page;
let owner: { token: string; user_id: string };
/** Every series read the Overview's charts and totals sent, as URLs. */
const chartReads: URL[] = [];
/** Every breakdown read the spend tables sent, as URLs. */
const breakdownReads: URL[] = [];
const cspViolations: string[] = [];

/** A datetime-local value for a moment, in TIME_ZONE (what the browser's inputs take). */
const localInput = (ms: number) => new Date(ms + ZONE_OFFSET_MS).toISOString().slice(0, 16);

const signedInPage = async (token: string): Promise<Page> => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: TIME_ZONE });
  await context.addInitScript((t) => sessionStorage.setItem("agentnet.token", t), token);
  const opened = await context.newPage();
  opened.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return opened;
};

const go = (p: Page, hash: string) => p.goto(`${stack.baseUrl}/#${hash}`);

/** The numbers of one column of a table, by the column's header. */
const columnNumbers = async (p: Page, table: string, column: string): Promise<number[]> =>
  p.getByRole("table", { name: table }).evaluate((element, header) => {
    const headers = [...element.querySelectorAll("thead th")].map((th) => th.textContent?.trim());
    const index = headers.indexOf(header);
    return [...element.querySelectorAll("tbody tr")].map((row) =>
      Number((row.children[index]?.textContent ?? "").replace(/[^0-9.]/g, "")),
    );
  }, column);

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack();
  const boot = await stack.bootstrap();
  owner = { token: boot.token, user_id: boot.user_id };
  await stack.api("POST", "/api/agent-network/settings", owner.token, { proxy_address: "proxy.example.com" });
  await stack.openAiForEveryone(owner.token);
  await stack.api("POST", "/api/agent-network/budget-rules", owner.token, {
    name: "Hourly tokens",
    limits: {
      token_limit: { enabled: true, group_cap: 0, user_cap: 2_000, window_seconds: 3_600 },
      budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3_600 },
    },
  });
  const member = await stack.addMember(owner.token, "Mia Member");
  const statuses: number[] = [];
  for (let i = 0; i < 3; i += 1) statuses.push(await stack.chat(owner.token));
  statuses.push(await stack.chat(owner.token, { model: "gpt-4o" }));
  for (let i = 0; i < 2; i += 1) statuses.push(await stack.chat(member.token));
  // Beyond the 2,000-token budget: refused before the upstream, a denied row without tokens.
  statuses.push(await stack.chat(member.token, { maxTokens: 5_000 }));
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
  await stack.waitFor(
    () => stack.api<LogPage>("GET", "/api/agent-network/access-logs?page_size=1", owner.token),
    (logs) => logs.total_records === 7,
    "7 access-log rows",
  );
  await stack.waitFor(
    () =>
      stack.api<{ requests: number; total_tokens: number }[]>(
        "GET",
        "/api/agent-network/usage/series",
        owner.token,
      ),
    (buckets) =>
      buckets.reduce((sum, b) => sum + b.requests, 0) === 7 &&
      buckets.reduce((sum, b) => sum + b.total_tokens, 0) === 900,
    "7 requests and 900 tokens of usage",
  );
  page = await signedInPage(owner.token);
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname === "/api/agent-network/usage/series") chartReads.push(url);
    if (url.pathname === "/api/agent-network/usage/breakdown") breakdownReads.push(url);
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("analytics and the API reference against the real stack", { timeout: 60_000 }, () => {
  it("charts requests, outcomes, latency, tokens and cost on a time axis, every number in a text alternative", async () => {
    await go(page, "/");
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await page.getByRole("table", { name: /^Tokens per hour/ }).waitFor({ state: "attached" });
    expect(await page.locator(".time-chart-plot canvas").count()).toBe(5);
    expect(
      await page.getByRole("img", { name: /^Tokens per hour: \d+ of 1\d\d buckets with usage/ }).count(),
    ).toBe(1);
    // The usage of the range, bucket by bucket: 6 answered requests of 120 input and 30 output tokens.
    expect((await columnNumbers(page, "Tokens per hour", "Input tokens")).reduce((a, b) => a + b, 0)).toBe(
      720,
    );
    expect((await columnNumbers(page, "Tokens per hour", "Output tokens")).reduce((a, b) => a + b, 0)).toBe(
      180,
    );
    // Hour buckets start on the hour in UTC, so at half past in India.
    const starts = await page
      .getByRole("table", { name: /^Tokens per hour/ })
      .locator("tbody th")
      .allTextContents();
    for (const start of starts) expect(start).toMatch(/:30:00$/);
    expect(await page.getByTestId("total-tokens").textContent()).toBe("900");
    // Every request counts, logged or not: six answered, one refused by the budget rule.
    expect(await page.getByTestId("total-requests").textContent()).toBe("7");
    expect(await page.getByTestId("error-requests").textContent()).toBe("0 (0%)");
    expect(await page.getByTestId("denied-requests").textContent()).toBe("1 (14.3%)");
    const sum = async (table: string, column: string) =>
      (await columnNumbers(page, table, column)).reduce((a, b) => a + b, 0);
    expect(await sum("Requests per hour", "Succeeded")).toBe(6);
    expect(await sum("Requests per hour", "Denied")).toBe(1);
    expect(await sum("Error and deny rate per hour", "Error rate")).toBe(0);
    // Latency of the answered requests, in every bucket that had one.
    const latency = page.getByRole("table", { name: /^Latency per hour/ });
    const p95s = await latency.locator("tbody tr td:nth-of-type(2)").allTextContents();
    expect(p95s.length).toBeGreaterThan(0);
    for (const p95 of p95s) expect(p95).toMatch(/^\d+ ms$|^\d+\.\d\d s$/);
    // Opened on the last 7 days in hours.
    const read = chartReads.at(-1);
    expect(read?.searchParams.get("granularity")).toBe("hour");
    const span =
      Date.parse(read?.searchParams.get("end_date") ?? "") -
      Date.parse(read?.searchParams.get("start_date") ?? "");
    expect(span).toBeGreaterThanOrEqual(7 * 86_400_000);
    expect(span).toBeLessThan(7 * 86_400_000 + 3_600_000);
  });

  it("switches presets: the URL holds the range and the API is asked for it in fitting buckets", async () => {
    const expectations = [
      ["1 h", "range=1h", "minute", 3_600_000],
      ["30 d", "range=30d", "day", 30 * 86_400_000],
      ["24 h", "range=24h", "hour", 86_400_000],
    ] as const;
    for (const [label, query, granularity, length] of expectations) {
      const before = chartReads.length;
      await page.getByRole("button", { name: label, exact: true }).click();
      await expect.poll(() => page.url()).toContain(query);
      await expect.poll(() => chartReads.length).toBeGreaterThan(before);
      const read = chartReads.at(-1);
      expect(read?.searchParams.get("granularity")).toBe(granularity);
      const span =
        Date.parse(read?.searchParams.get("end_date") ?? "") -
        Date.parse(read?.searchParams.get("start_date") ?? "");
      expect(span).toBeGreaterThanOrEqual(length);
      expect(span).toBeLessThan(length + 86_400_000);
      expect(await page.getByRole("button", { name: label, exact: true }).getAttribute("aria-pressed")).toBe(
        "true",
      );
    }
    await page.getByRole("table", { name: /^Tokens per hour/ }).waitFor({ state: "attached" });
    expect(await page.getByTestId("total-tokens").textContent()).toBe("900");
  });

  it("takes a custom range, refusing one that ends before it starts", async () => {
    await page.getByRole("button", { name: "Custom" }).click();
    const form = page.getByRole("form", { name: "Custom range" });
    const now = Date.now();
    await form.getByLabel("From").fill(localInput(now + 3_600_000));
    await form.getByLabel("To").fill(localInput(now - 3_600_000));
    await form.getByRole("button", { name: "Apply range" }).click();
    await form.getByText("The end must be after the start.").waitFor();
    expect(page.url()).not.toContain("range=custom");

    const before = chartReads.length;
    await form.getByLabel("From").fill(localInput(now - 2 * 3_600_000));
    await form.getByLabel("To").fill(localInput(now + 3_600_000));
    await form.getByRole("button", { name: "Apply range" }).click();
    await expect.poll(() => page.url()).toContain("range=custom");
    const url = new URL(page.url().replace("#/", ""));
    const start = Date.parse(url.searchParams.get("start_date") ?? "");
    expect(Math.abs(start - (now - 2 * 3_600_000))).toBeLessThan(60_000);
    await expect.poll(() => chartReads.length).toBeGreaterThan(before);
    const read = chartReads.at(-1);
    expect(read?.searchParams.get("granularity")).toBe("minute");
    expect(read?.searchParams.get("start_date")).toBe(url.searchParams.get("start_date"));
    await page.getByRole("table", { name: /^Tokens per minute/ }).waitFor({ state: "attached" });
    await expect.poll(() => page.getByTestId("total-tokens").textContent()).toBe("900");
    expect(await page.getByRole("form", { name: "Custom range" }).getByLabel("From").inputValue()).toBe(
      localInput(now - 2 * 3_600_000),
    );
  });

  it("lists spend by model, provider, user and group with one breakdown read each, by cost", async () => {
    const before = breakdownReads.length;
    await page.getByRole("button", { name: "24 h", exact: true }).click();
    const byModel = page.getByRole("table", { name: "By model" });
    await byModel.getByRole("rowheader", { name: "gpt-4o-mini" }).waitFor();
    const reads = breakdownReads.slice(before);
    expect(reads.map((url) => url.searchParams.get("by")).sort()).toEqual([
      "group",
      "model",
      "provider",
      "user",
    ]);
    expect(new Set(reads.map((url) => url.searchParams.get("start_date"))).size).toBe(1);
    const requestsOf = async (table: string, name: string) =>
      page
        .getByRole("table", { name: table })
        .getByRole("row", { name: new RegExp(`^${name} `) })
        .locator("td")
        .nth(1)
        .textContent();
    expect(await requestsOf("By model", "gpt-4o-mini")).toBe("6");
    expect(await requestsOf("By model", "gpt-4o")).toBe("1");
    const viaProvider = await stack.api<LogPage>(
      "GET",
      "/api/agent-network/access-logs?page_size=1&provider_id=" +
        (await stack.api<{ id: string }[]>("GET", "/api/agent-network/providers", owner.token))[0]?.id,
      owner.token,
    );
    expect(await requestsOf("By provider", "OpenAI")).toBe(String(viaProvider.total_records));
    expect(await requestsOf("By user", "Olivia Owner")).toBe("4");
    expect(await requestsOf("By user", "Mia Member")).toBe("3");
    expect(await requestsOf("By group", "All")).toBe("7");
    for (const table of ["By model", "By provider", "By user", "By group"]) {
      const costs = await columnNumbers(page, table, "Cost");
      expect(costs).toEqual([...costs].sort((a, b) => b - a));
    }
    expect((await columnNumbers(page, "By model", "Tokens")).reduce((a, b) => a + b, 0)).toBe(900);
    await page.getByRole("table", { name: /^Tokens per hour/ }).waitFor({ state: "attached" });
    await screenshot(page, "21-analytics");
  });

  it("reads the API reference: operations by tag, parameters, search, the raw document", async () => {
    await go(page, "/api-reference");
    await page.getByRole("heading", { level: 1, name: "API reference" }).waitFor();
    const search = page.getByLabel("Search operations");
    await search.fill("access-logs");
    await page.getByText(/^2 of \d+ operations$/).waitFor();
    // The search leaves the list and the one-entry read, whichever tag the document files them under.
    await page
      .locator("details.api-operation")
      .getByText("/api/agent-network/access-logs", { exact: true })
      .click();
    const parameters = page.getByRole("table", { name: "Parameters of GET /api/agent-network/access-logs" });
    await parameters.waitFor();
    const names = await parameters.locator("tbody th code").allTextContents();
    expect(names).toEqual(
      expect.arrayContaining(["page", "page_size", "start_date", "end_date", "model", "sort_by"]),
    );
    expect(await parameters.getByRole("row", { name: /^page_size / }).textContent()).toContain("1 to 100");
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, "22-api-reference");

    await search.fill("consumption");
    await expect.poll(() => page.locator("details.api-operation").count()).toBe(2);
    await page.getByText(/^2 of \d+ operations$/).waitFor();
    await search.fill("no such operation");
    await page.getByText("No operation matches").waitFor();
    await search.fill("");
    await expect.poll(() => page.locator("details.api-operation").count()).toBeGreaterThan(40);

    const download = page.waitForEvent("download");
    await page.getByRole("link", { name: "Download the OpenAPI document (JSON)" }).click();
    const file = await (await download).path();
    const document = JSON.parse(readFileSync(file, "utf8")) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toContain("/api/agent-network/access-logs");
  });

  it("shows the API reference to a regular member too", async () => {
    const member = await stack.addMember(owner.token, "Max Member");
    const memberPage = await signedInPage(member.token);
    await go(memberPage, "/api-reference");
    await memberPage.getByRole("heading", { level: 1, name: "API reference" }).waitFor();
    const nav = memberPage.getByRole("navigation", { name: "Main" });
    expect(await nav.getByRole("link", { name: "API reference" }).count()).toBe(1);
    await memberPage.locator("details.api-operation").first().waitFor();
    await memberPage.context().close();
  });

  it("passes axe on both pages, in the light and the dark color scheme", async () => {
    const found: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      await go(page, "/?range=24h");
      await page.getByRole("table", { name: "By group" }).waitFor();
      for (const violation of await axeViolations(page)) found.push(`${colorScheme} overview: ${violation}`);
      await go(page, "/api-reference");
      await page.locator("details.api-operation").first().waitFor();
      await page.locator("details.api-operation summary").first().click();
      for (const violation of await axeViolations(page))
        found.push(`${colorScheme} api reference: ${violation}`);
    }
    await page.emulateMedia({ colorScheme: "light" });
    expect(found).toEqual([]);
  });

  it("ran without anything refused by the Content-Security-Policy", () => {
    expect(cspViolations).toEqual([]);
  });
});
