import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchChromium, newPage, screenshot } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

interface Delivery {
  status: string;
  last_error: string;
}

let stack: DashboardStack;
let browser: Browser;
let page: Page;
let owner: { token: string };
/** What the browser refused under the gateway's Content-Security-Policy, on any page of the run. */
const cspViolations: string[] = [];

/** A loopback receiver the notifier was not allowed to reach: every alert to it is refused, and logged. */
const UNLISTED_RECEIVER = "http://127.0.0.1:9/alerts";

const heading = (p: Page, name: string) => p.getByRole("heading", { level: 1, name });
const deliveries = () =>
  stack.api<Delivery[]>("GET", "/api/agent-network/notifications/deliveries", owner.token);

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack({ notifier: { attemptTimeoutMs: 2_000 } });
  const boot = await stack.bootstrap();
  owner = { token: boot.token };
  await stack.api("POST", "/api/agent-network/settings", owner.token, { proxy_address: "proxy.example.com" });
  await stack.openAiForEveryone(owner.token);
  await stack.api("POST", "/api/agent-network/budget-rules", owner.token, {
    name: "Small hourly cap",
    limits: {
      token_limit: { enabled: true, group_cap: 0, user_cap: 100, window_seconds: 3600 },
      budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
    },
  });
  page = await newPage(browser);
  await page.context().addInitScript((t) => sessionStorage.setItem("agentnet.token", t), owner.token);
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("alerts page", { timeout: 60_000 }, () => {
  it("sets up the webhook, checking thresholds first, and shows the signing secret once", async () => {
    await page.goto(`${stack.baseUrl}/#/config/alerts`);
    await heading(page, "Alerts").waitFor();
    await page.getByText("No webhook yet").waitFor();
    await page.getByLabel("URL", { exact: true }).fill(UNLISTED_RECEIVER);
    await page.getByLabel("Thresholds (% of a cap)").fill("80, 120");
    await page.getByRole("button", { name: "Create webhook" }).click();
    await page.getByText("120 is not a whole percent from 1 to 100.").waitFor();

    await page.getByLabel("Thresholds (% of a cap)").fill("50, 80, 100");
    await page.getByRole("button", { name: "Create webhook" }).click();
    const secret = page.getByRole("textbox", { name: "Secret" });
    await secret.waitFor();
    expect(await secret.inputValue()).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    await screenshot(page, "25-alerts-secret");
    const stored = await stack.api<Record<string, unknown>>(
      "GET",
      "/api/agent-network/notifications",
      owner.token,
    );
    expect(stored).toMatchObject({ url: UNLISTED_RECEIVER, thresholds: [50, 80, 100], enabled: true });
    expect(JSON.stringify(stored)).not.toContain(await secret.inputValue());

    await page.getByRole("button", { name: "Done, hide the secret" }).click();
    await expect.poll(() => secret.count()).toBe(0);
    await page.getByRole("button", { name: "Save webhook" }).waitFor();
  });

  it("lists each alert sent, with why a delivery was refused", async () => {
    // The vendor bills 150 tokens against a cap of 100: one request passes 50, 80 and 100 %.
    expect(await stack.chat(owner.token, { maxTokens: 5 })).toBe(200);
    await stack.waitFor(
      deliveries,
      (rows) => rows.length === 3 && rows.every((row) => row.status === "refused"),
      "three refused deliveries",
    );
    await page.getByRole("button", { name: "Refresh" }).click();
    const table = page.getByRole("table", { name: "Deliveries" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(3);
    expect(await table.getByText("refused", { exact: true }).count()).toBe(3);
    await table.getByText(/100 % of budget rule Small hourly cap for user/).waitFor();
    expect(await table.getByText(/is the loopback address 127\.0\.0\.1/).count()).toBe(3);
    await screenshot(page, "26-alerts-deliveries");
  });

  it("passes axe with the form and the delivery log, in the light and the dark color scheme", async () => {
    const found: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      for (const violation of await axeViolations(page)) found.push(`${colorScheme}: ${violation}`);
    }
    await page.emulateMedia({ colorScheme: "light" });
    expect(found).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
