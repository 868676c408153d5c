import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, newPage } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

interface ProviderRow {
  id: string;
  name: string;
  anthropic_betas?: string[];
}

let stack: DashboardStack;
let browser: Browser;
let page: Page;
let owner: { token: string };

const go = (hash: string) => page.goto(`${stack.baseUrl}/#${hash}`);
const providers = () => stack.api<ProviderRow[]>("GET", "/api/agent-network/providers", owner.token);
const betasField = () => page.getByLabel("Claude betas let through");

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack();
  const boot = await stack.bootstrap();
  owner = { token: boot.token };
  page = await newPage(browser);
  await page.goto(stack.baseUrl);
  await page.getByLabel("API token").fill(owner.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/**
 * The provider form's Claude betas field (docs/API.md, "Claude betas per upstream"): shown for a
 * Vertex provider with the catalog's list as its default, refusing a value the API would, stored as
 * typed, and cleared back to the catalog's by emptying it.
 */
describe("a provider's Claude betas in the dashboard", { timeout: 60_000 }, () => {
  it("is not offered for an entry that serves no Claude", async () => {
    await go("/config/providers");
    await page.getByRole("button", { name: "Add provider" }).click();
    await page
      .getByRole("button", { name: /^OpenAI/ })
      .first()
      .click();
    await page.getByLabel("Upstream URL").waitFor();
    expect(await betasField().count()).toBe(0);
    await page.getByRole("button", { name: "Cancel" }).click();
  });

  it("sets a Vertex provider's list, then clears it back to the catalog's", async () => {
    await go("/config/providers");
    await page.getByRole("button", { name: "Add provider" }).click();
    await page.getByRole("button", { name: /^Google Vertex AI/ }).click();
    await page.getByLabel("Name").fill("Claude on Vertex");
    await page.getByLabel("Upstream URL").fill(`${stack.upstreamUrl}/v1/projects/p/locations/us-east5`);
    await page.getByLabel("Service-account key or access token").fill("ya29.test-token");
    expect(await betasField().getAttribute("placeholder")).toContain("context-1m-2025-08-07");
    await page.getByText(/Empty uses the catalog's list: .*context-1m-2025-08-07/).waitFor();

    await betasField().fill("context-1m-2025-08-07, Brand-New");
    await page.getByRole("button", { name: "Add provider" }).click();
    await page.getByText("Brand-New: must be 1 to 64 of a-z, 0-9, - and _").waitFor();
    await betasField().fill("context-1m-2025-08-07, brand-new-2026-12-01");
    await page.getByRole("button", { name: "Add provider" }).click();
    await page.getByRole("cell", { name: "Claude on Vertex", exact: true }).waitFor();
    const [created] = await providers();
    expect(created?.anthropic_betas).toEqual(["context-1m-2025-08-07", "brand-new-2026-12-01"]);

    await page.getByRole("button", { name: "Edit Claude on Vertex" }).click();
    expect(await betasField().inputValue()).toBe("context-1m-2025-08-07, brand-new-2026-12-01");
    await betasField().fill("");
    await page.getByRole("button", { name: "Save provider" }).click();
    await expect.poll(async () => (await providers())[0]).not.toHaveProperty("anthropic_betas");
  });
});
