import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchChromium, screenshot } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

let stack: DashboardStack;
let browser: Browser;
let page: Page;
let owner: { token: string; user_id: string };
/** What the browser refused under the gateway's Content-Security-Policy, on any page of the run. */
const cspViolations: string[] = [];

const go = (p: Page, hash: string) => p.goto(`${stack.baseUrl}/#${hash}`);
const heading = (p: Page, name: string) => p.getByRole("heading", { level: 1, name });

/** A signed-in page of the given size. */
async function openPage(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  await context.addInitScript((t) => sessionStorage.setItem("agentnet.token", t), owner.token);
  const opened = await context.newPage();
  opened.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return opened;
}

/** Waits until the page shows its data rather than its loading state. */
const loaded = (p: Page) =>
  p.waitForFunction(() => !(document.body.textContent ?? "").includes("Loading"), undefined, {
    timeout: 10_000,
  });

/** How far the page scrolls sideways beyond its window (0 when it does not). */
const sidewaysScroll = (p: Page) =>
  p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** The outermost elements reaching past the window's right edge: where a sideways scroll comes from. */
const widestElements = (p: Page) =>
  p.evaluate(() => {
    const right = document.documentElement.clientWidth;
    return [...document.querySelectorAll("body *")]
      .filter(
        (element) =>
          element.getBoundingClientRect().right > right &&
          (element.parentElement?.getBoundingClientRect().right ?? 0) <= right,
      )
      .map((element) => `${element.tagName.toLowerCase()}.${element.className}`);
  });

async function axeInBothSchemes(p: Page, where: string): Promise<string[]> {
  const found: string[] = [];
  for (const colorScheme of ["light", "dark"] as const) {
    await p.emulateMedia({ colorScheme });
    for (const violation of await axeViolations(p)) found.push(`${colorScheme} ${where}: ${violation}`);
  }
  await p.emulateMedia({ colorScheme: "light" });
  return found;
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack();
  const boot = await stack.bootstrap();
  owner = { token: boot.token, user_id: boot.user_id };
  page = await openPage({ width: 1280, height: 800 });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("forms and layout polish", { timeout: 90_000 }, () => {
  it("shows the API's field error for a loopback proxy address until the field is edited", async () => {
    await go(page, "/config/settings");
    const address = page.getByLabel("Proxy address");
    await address.fill("localhost");
    await page.getByRole("button", { name: "Create settings" }).click();
    await page.getByText("must not be a loopback name").waitFor();
    expect(await address.getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByRole("alert").textContent()).toMatch(/loopback name/);

    await address.fill("proxy.example.com");
    expect(await page.getByText("must not be a loopback name").count()).toBe(0);
    expect(await address.getAttribute("aria-invalid")).toBeNull();
    // Every field the refusal named has changed: its alert goes too.
    expect(await page.getByRole("alert").count()).toBe(0);

    await page.getByRole("button", { name: "Create settings" }).click();
    await page.getByTestId("endpoint").waitFor();
  });

  it("warns that a budget rule caps nothing, stores it all the same, and drops the warning once a cap is set", async () => {
    await go(page, "/config/budget-rules");
    await page.getByText("No budget rules yet").waitFor();
    await page.getByRole("button", { name: "New budget rule" }).click();
    await page.getByLabel("Name").fill("Hourly tokens");
    await page.getByText("This rule caps nothing yet").waitFor();
    await page.getByLabel("Enforce a token cap").check();
    await page.getByLabel("Tokens per user").fill("50000");
    expect(await page.getByText("This rule caps nothing yet").count()).toBe(0);
    await page.getByLabel("Enforce a token cap").uncheck();
    await page.getByText("This rule caps nothing yet").waitFor();
    await page.getByRole("button", { name: "Create budget rule" }).click();
    await page.getByRole("cell", { name: "Hourly tokens", exact: true }).waitFor();
    const rules = await stack.api<{ name: string }[]>("GET", "/api/agent-network/budget-rules", owner.token);
    expect(rules.map((rule) => rule.name)).toEqual(["Hourly tokens"]);
  });

  it("creates a guardrail from two providers' models and one typed by id", async () => {
    const openai = await stack.api<{ id: string }>("POST", "/api/agent-network/providers", owner.token, {
      provider_id: "openai_api",
      name: "OpenAI",
      upstream_url: `${stack.upstreamUrl}/v1`,
      api_key: "sk-test-upstream",
    });
    await stack.api("POST", "/api/agent-network/providers", owner.token, {
      provider_id: "anthropic_api",
      name: "Anthropic",
      upstream_url: stack.upstreamUrl,
      api_key: "sk-ant-test",
      models: [
        { id: "claude-sonnet-4-6", input_per_1k: 0.003, output_per_1k: 0.015 },
        { id: "claude-internal-preview", input_per_1k: 0.003, output_per_1k: 0.015 },
      ],
    });

    await go(page, "/config/guardrails");
    await page.getByText("No guardrails yet").waitFor();
    await page.getByRole("button", { name: "New guardrail" }).click();
    await page.getByLabel("Name").fill("Approved models");
    await page.getByLabel("Only allow the listed models").check();
    const anthropic = page.getByRole("group", { name: "Anthropic" });
    // Its own model list, not the catalog's: the preview model is there, Opus is not.
    await anthropic.getByLabel("claude-internal-preview").waitFor();
    expect(await anthropic.getByLabel(/claude-opus/).count()).toBe(0);

    await page.getByLabel("Filter models").fill("mini");
    expect(await anthropic.count()).toBe(0);
    await page.getByRole("group", { name: "OpenAI" }).getByLabel("GPT-4o mini (gpt-4o-mini)").check();
    await page.getByLabel("Filter models").fill("");
    await anthropic.getByLabel("claude-internal-preview").check();
    const typed = page.getByLabel("Another model id");
    await typed.fill("my-fine-tune");
    // Enter adds the id; it does not submit the guardrail.
    await typed.press("Enter");
    await page.getByRole("list", { name: "Models added by id" }).getByText("my-fine-tune").waitFor();
    await page.getByText("3 selected.").waitFor();
    expect(await axeInBothSchemes(page, "guardrail form")).toEqual([]);
    await screenshot(page, "23-guardrail-models");

    await page.getByRole("button", { name: "Create guardrail" }).click();
    await page.getByRole("cell", { name: "Approved models", exact: true }).waitFor();
    const [guardrail] = await stack.api<
      { checks: { model_allowlist: { enabled: boolean; models: string[] } } }[]
    >("GET", "/api/agent-network/guardrails", owner.token);
    expect(guardrail?.checks.model_allowlist.enabled).toBe(true);
    expect(guardrail?.checks.model_allowlist.models.toSorted()).toEqual([
      "claude-internal-preview",
      "gpt-4o-mini",
      "my-fine-tune",
    ]);

    // Traffic, so the usage pages show tables rather than empty states on the phone below.
    const groups = await stack.api<{ id: string; name: string }[]>("GET", "/api/groups", owner.token);
    const everyone = groups.find((g) => g.name === "All");
    if (!everyone) throw new Error(`no All group in ${JSON.stringify(groups)}`);
    await stack.api("POST", "/api/agent-network/policies", owner.token, {
      name: "Everyone may use OpenAI",
      source_groups: [everyone.id],
      destination_provider_ids: [openai.id],
    });
    await stack.waitFor(
      () => stack.chat(owner.token, { session: "phone-check" }),
      (status) => status === 200,
      "a first chat",
    );
  });

  it("fits every page and form into a 390 px phone, the nav behind a menu button", async () => {
    await stack.waitFor(
      () => stack.api<{ total_records: number }>("GET", "/api/agent-network/access-logs", owner.token),
      (logs) => logs.total_records > 0,
      "an access-log row",
    );
    const phone = await openPage({ width: 390, height: 844 });
    await go(phone, "/");
    await heading(phone, "Overview").waitFor();
    const nav = phone.getByRole("navigation", { name: "Main" });
    const menu = phone.getByRole("button", { name: "Menu" });
    expect(await nav.isVisible()).toBe(false);

    const paths = await phone.$$eval("#main-nav a", (links) =>
      links.map((link) => (link.getAttribute("href") ?? "").replace(/^#/, "")),
    );
    expect(paths).toContain("/config/guardrails");
    const overflowing: string[] = [];
    const measure = async (where: string) => {
      await loaded(phone);
      const extra = await sidewaysScroll(phone);
      if (extra > 0)
        overflowing.push(`${where}: ${extra} px too wide (${(await widestElements(phone)).join("; ")})`);
    };
    for (const path of [...paths, "/sessions/phone-check"]) {
      await go(phone, path);
      await phone.getByRole("heading", { level: 1 }).first().waitFor();
      await measure(path);
    }
    const forms = [
      ["/config/guardrails", "New guardrail"],
      ["/config/policies", "New policy"],
      ["/config/budget-rules", "New budget rule"],
      ["/config/providers", "Add provider"],
    ] as const;
    for (const [path, button] of forms) {
      await go(phone, path);
      await phone.getByRole("button", { name: button }).click();
      await measure(`${path} ${button}`);
    }
    await phone.getByRole("button", { name: /^OpenAI/ }).click();
    await phone.getByLabel("Upstream URL").waitFor();
    await measure("/config/providers OpenAI provider form");
    expect(overflowing).toEqual([]);

    await go(phone, "/config/policies");
    await phone.getByRole("cell", { name: "Everyone may use OpenAI", exact: true }).waitFor();
    await screenshot(phone, "24-phone");
    await menu.click();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    await nav.getByRole("link", { name: "Guardrails" }).waitFor();
    expect(await axeInBothSchemes(phone, "phone with the menu open")).toEqual([]);

    await phone.keyboard.press("Escape");
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect(await nav.isVisible()).toBe(false);
    expect(await phone.evaluate(() => document.activeElement?.textContent)).toBe("Menu");

    await menu.click();
    await nav.getByRole("link", { name: "Guardrails" }).click();
    await heading(phone, "Guardrails").waitFor();
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await phone.context().close();
  });

  it("lets a keyboard scroll a table wider than a phone, showing where the focus is", async () => {
    const phone = await openPage({ width: 390, height: 844 });
    await go(phone, "/logs");
    const scroller = phone.getByRole("region", { name: "Access log entries" });
    await scroller.locator("tbody tr").first().waitFor();
    expect(await scroller.evaluate((element) => element.scrollWidth > element.clientWidth)).toBe(true);
    // Reached with Tab from the control before it, as a keyboard user would.
    await scroller.focus();
    await phone.keyboard.press("Shift+Tab");
    await phone.keyboard.press("Tab");
    expect(
      await scroller.evaluate(
        (element) =>
          document.activeElement === element &&
          element.matches(":focus-visible") &&
          getComputedStyle(element).outlineStyle !== "none",
      ),
    ).toBe(true);
    await phone.keyboard.press("ArrowRight");
    await expect.poll(() => scroller.evaluate((element) => element.scrollLeft)).toBeGreaterThan(0);
    // With room for the whole table there is nothing to scroll, and no Tab stop.
    await phone.setViewportSize({ width: 2560, height: 900 });
    await expect
      .poll(() => scroller.evaluate((element) => element.scrollWidth > element.clientWidth))
      .toBe(false);
    await expect.poll(() => scroller.getAttribute("tabindex")).toBeNull();
    await phone.context().close();
  });

  it("shows the provider catalog at 1440 px without a sideways scroll", async () => {
    const wide = await openPage({ width: 1440, height: 900 });
    await go(wide, "/config/providers");
    await wide.getByRole("button", { name: "Add provider" }).click();
    const cloudflare = wide.getByRole("button", { name: /^Cloudflare/ });
    await cloudflare.waitFor();
    expect(await sidewaysScroll(wide)).toBe(0);
    expect(await cloudflare.evaluate((card) => card.scrollWidth - card.clientWidth)).toBe(0);
    await wide.context().close();
  });

  it("ran every page above without anything refused by the Content-Security-Policy", () => {
    expect(cspViolations).toEqual([]);
  });
});
