import type { Policy } from "@agentnet/contracts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchChromium, newPage, screenshot } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

interface LogPage {
  total_records: number;
  data: { user_id: string; decision: string }[];
}

let stack: DashboardStack;
let browser: Browser;
let page: Page;
let owner: { token: string; account_id: string; user_id: string };
let member: { id: string; token: string };
/** What the browser refused under the gateway's Content-Security-Policy, on any page of the run. */
const cspViolations: string[] = [];

const go = async (p: Page, hash: string) => {
  await p.goto(`${stack.baseUrl}/#${hash}`);
};
const heading = (p: Page, name: string) => p.getByRole("heading", { level: 1, name });

beforeAll(async () => {
  // Chromium first: a missing browser fails here, naming what to install, before anything else starts.
  browser = await launchChromium();
  stack = await startDashboardStack();
  const boot = await stack.bootstrap();
  owner = { token: boot.token, account_id: boot.account_id, user_id: boot.user_id };
  page = await newPage(browser);
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("the dashboard against the real stack", { timeout: 60_000 }, () => {
  it("signs the owner in with an API token and refuses a bad one", async () => {
    await page.goto(stack.baseUrl);
    await expect.poll(() => page.getByLabel("API token").isVisible()).toBe(true);
    await screenshot(page, "01-sign-in");
    await page.getByLabel("API token").fill("agn_not_a_real_token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("That token was not accepted").waitFor();
    await page.getByLabel("API token").fill(owner.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await heading(page, "Overview").waitFor();
    expect(
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Providers" }).count(),
    ).toBe(1);
  });

  it("creates the gateway settings through the UI", async () => {
    await go(page, "/config/settings");
    await page.getByLabel("Proxy address").fill("proxy.example.com");
    await page.getByRole("button", { name: "Create settings" }).click();
    await page.getByTestId("endpoint").waitFor();
    expect(await page.getByTestId("endpoint").textContent()).toMatch(/proxy\.example\.com$/);
    await screenshot(page, "05-settings");
  });

  it("adds a provider from the catalog; discovery's refusal is shown in words; the key is write-only", async () => {
    await go(page, "/config/providers");
    await page.getByText("No providers yet").waitFor();
    await page.getByRole("button", { name: "Add provider" }).click();
    await screenshot(page, "06-provider-catalog");
    await page
      .getByRole("button", { name: /^OpenAI/ })
      .first()
      .click();
    await page.getByLabel("Upstream URL").fill(`${stack.upstreamUrl}/v1`);
    await page.getByLabel("API key").fill("sk-test-upstream");
    await page.getByRole("button", { name: "Discover models" }).click();
    // A loopback upstream is never dialled by the verifier: discovery answers 422 and says why.
    await page.getByText(/a loopback address that is not public; the verifier does not dial it/).waitFor();
    await screenshot(page, "07-provider-form");
    await page.getByRole("button", { name: "Add provider" }).click();
    await page.getByRole("cell", { name: "all catalog models", exact: true }).waitFor();
    const providers = await stack.api<{ name: string }[]>("GET", "/api/agent-network/providers", owner.token);
    expect(providers.map((p) => p.name)).toEqual(["OpenAI"]);
    expect(JSON.stringify(providers)).not.toContain("sk-test-upstream");
  });

  it("creates a policy; the limits editor refuses a short window before submitting", async () => {
    await go(page, "/config/policies");
    await page.getByRole("button", { name: "New policy" }).click();
    await page.getByLabel("Name").fill("Everyone may use OpenAI");
    await page.getByRole("group", { name: "Source groups" }).getByLabel("All").check();
    await page.getByRole("group", { name: "Providers" }).getByLabel("OpenAI").check();
    await page.getByLabel("Set caps on this policy").check();
    await page.getByLabel("Enforce a token cap").check();
    const tokenLimit = page.getByRole("group", { name: "Token limit" });
    await tokenLimit.getByLabel("Window", { exact: true }).selectOption("custom");
    await tokenLimit.getByLabel("Window (seconds)").fill("30");
    await page.getByRole("button", { name: "Create policy" }).click();
    await page.getByText("must be at least 60 seconds when the limit is enabled").waitFor();
    await screenshot(page, "09-policy-limits-error");
    await page.getByLabel("Set caps on this policy").uncheck();
    await page.getByRole("button", { name: "Create policy" }).click();
    await page.getByRole("cell", { name: "Everyone may use OpenAI", exact: true }).waitFor();
  });

  it("creates a budget rule capping each user at 2,000 tokens an hour", async () => {
    await go(page, "/config/budget-rules");
    await page.getByText("No budget rules yet").waitFor();
    await page.getByRole("button", { name: "New budget rule" }).click();
    await page.getByLabel("Name").fill("Hourly tokens");
    await page.getByLabel("Enforce a token cap").check();
    await page.getByLabel("Tokens per user").fill("2000");
    await page
      .getByRole("group", { name: "Token limit" })
      .getByLabel("Window", { exact: true })
      .selectOption("3600");
    await page.getByRole("button", { name: "Create budget rule" }).click();
    await page.getByRole("cell", { name: "Hourly tokens", exact: true }).waitFor();
    await screenshot(page, "10-budget-rules");
  });

  it("sends traffic through the gateway proxy: allowed, in sessions, and one denied by the cap", async () => {
    member = await stack.addMember(owner.token, "Mia Member");
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push(await stack.chat(owner.token, { session: "release-notes" }));
    statuses.push(await stack.chat(owner.token));
    for (let i = 0; i < 2; i += 1) statuses.push(await stack.chat(member.token, { session: "mia-refactor" }));
    // max_tokens beyond the 2,000-token budget: the reservation is refused before the upstream.
    statuses.push(await stack.chat(member.token, { session: "mia-refactor", maxTokens: 5_000 }));
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
    await stack.waitFor(
      () => stack.api<LogPage>("GET", "/api/agent-network/access-logs?page_size=100", owner.token),
      (logs) => logs.total_records >= 7,
      "7 access-log rows",
    );
    await stack.waitFor(
      () => stack.api<unknown[]>("GET", "/api/agent-network/consumption", owner.token),
      (counters) => counters.length > 0,
      "consumption counters",
    );
  });

  it("shows the traffic in Overview with totals and the split by model and provider", async () => {
    await go(page, "/");
    await page.getByRole("table", { name: "By model" }).waitFor();
    expect(await page.getByTestId("total-tokens").textContent()).toBe("900");
    await page.getByRole("button", { name: "24 h" }).click();
    await expect.poll(() => page.url()).toContain("range=24h");
    await page.getByRole("table", { name: "By provider" }).getByText("OpenAI").waitFor();
    await screenshot(page, "02-overview");
  });

  it("lists access logs with deny reasons in words, a drawer, and filters in the URL", async () => {
    await go(page, "/logs");
    const rows = page.getByRole("table", { name: "Access log entries" }).locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(7);
    await page.getByText("A budget rule's token cap for this window was reached").waitFor();
    await screenshot(page, "03-access-logs");
    await page.getByLabel("Decision").selectOption("deny");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(page.url()).toContain("decision=deny");
    await rows.first().focus();
    await page.keyboard.press("Enter");
    await page.getByRole("dialog").getByText("budget_rule.token_cap_exceeded").waitFor();
    await screenshot(page, "04-access-log-drawer");
    // Focus stays in the drawer: tabbing on never reaches the page behind it.
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.closest("dialog") !== null)).toBe(true);
    }
    await page.keyboard.press("Escape");
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0);
    // The URL alone restores the view (a shared link).
    const shared = await newPage(browser);
    await shared
      .context()
      .addInitScript((token) => sessionStorage.setItem("agentnet.token", token), owner.token);
    await shared.goto(page.url());
    await shared.getByRole("table", { name: "Access log entries" }).waitFor();
    expect(await shared.getByRole("table", { name: "Access log entries" }).locator("tbody tr").count()).toBe(
      1,
    );
    await shared.close();
  });

  it("groups requests into sessions and shows one session as a timeline", async () => {
    await go(page, "/sessions");
    await page.getByRole("link", { name: "release-notes" }).waitFor();
    await screenshot(page, "11-sessions");
    await page.getByRole("link", { name: "release-notes" }).click();
    await heading(page, "Session release-notes").waitFor();
    await expect
      .poll(() => page.getByRole("list", { name: "Requests in order" }).locator("li").count())
      .toBe(3);
    await screenshot(page, "12-session-timeline");
  });

  it("shows consumption against the budget rule's cap with the reset time", async () => {
    await go(page, "/consumption");
    await page
      .getByText(/of 2,000 \(budget rule "Hourly tokens"\)/)
      .first()
      .waitFor();
    expect(await page.getByRole("progressbar").count()).toBeGreaterThan(0);
    await screenshot(page, "13-consumption");
  });

  it("gives copyable snippets per client on the agent config page, the token masked until revealed", async () => {
    await go(page, "/agent");
    const tabs = page.getByRole("tablist", { name: "Client" });
    await tabs.waitFor();
    expect(await tabs.getByRole("tab").allTextContents()).toEqual([
      "curl",
      "Python",
      "TypeScript",
      "Claude Code",
      "Codex",
      "Copilot CLI",
      "Gemini CLI",
      "Google Gen AI SDK",
      "Claude Code on Vertex",
      "Claude Code on Bedrock",
      "AWS SDK (Bedrock Runtime)",
      "Azure OpenAI SDK",
    ]);
    // Opened on loopback: the snippets use the local proxy, and say where deployed clients go.
    const curl = await page.locator("pre").first().textContent();
    expect(curl).toContain("http://127.0.0.1:8090/v1/chat/completions");
    expect(curl).not.toContain(owner.token);
    await page.getByText(/In a deployment, clients use the endpoint/).waitFor();
    await tabs.getByRole("tab", { name: "Claude Code", exact: true }).click();
    await screenshot(page, "14-agent-config");
    await page.getByRole("button", { name: "Reveal" }).click();
    expect(await page.locator("pre").first().textContent()).toContain(`ANTHROPIC_AUTH_TOKEN=${owner.token}`);
    await tabs.getByRole("tab", { name: "Gemini CLI" }).click();
    expect(await page.locator("pre").first().textContent()).toContain(`GEMINI_API_KEY=${owner.token}`);
  });

  it("lets a regular member see only their own rows and no configuration", async () => {
    const memberPage = await newPage(browser);
    await memberPage.goto(stack.baseUrl);
    await memberPage.getByLabel("API token").fill(member.token);
    await memberPage.getByRole("button", { name: "Sign in" }).click();
    await heading(memberPage, "Overview").waitFor();
    const nav = memberPage.getByRole("navigation", { name: "Main" });
    expect(await nav.getByRole("link", { name: "Providers" }).count()).toBe(0);
    await memberPage.getByRole("table", { name: "By model" }).waitFor();
    expect(await memberPage.getByTestId("total-tokens").textContent()).toBe("300");
    await go(memberPage, "/logs");
    const rows = memberPage.getByRole("table", { name: "Access log entries" }).locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(3);
    expect(await memberPage.getByRole("columnheader", { name: "User" }).count()).toBe(0);
    await screenshot(memberPage, "15-member-access-logs");
    await go(memberPage, "/consumption");
    const ownCaps = memberPage.getByRole("list", { name: "Caps that apply to you" });
    await ownCaps
      .getByText(/left of 2,000/)
      .first()
      .waitFor();
    expect(await ownCaps.getByText(/Budget rule “Hourly tokens”/).count()).toBeGreaterThan(0);
    // The request the cap refused, with the reason in words.
    const refusals = memberPage.getByRole("region", { name: "Your last refusals" });
    await refusals.getByText("A budget rule's token cap for this window was reached").waitFor();
    expect(await refusals.locator("tbody tr").count()).toBe(1);
    await memberPage.getByRole("button", { name: "Sign out" }).click();
    await memberPage.getByLabel("API token").waitFor();
    expect(await memberPage.evaluate(() => sessionStorage.getItem("agentnet.token"))).toBeNull();
    await memberPage.close();
  });

  it("turns on agent-network-only in account settings, which hides the other sections", async () => {
    await go(page, "/account");
    const nav = page.getByRole("navigation", { name: "Main" });
    expect(await nav.getByRole("link", { name: "Team" }).count()).toBe(1);
    const section = page.getByLabel("Show the agent-network section");
    await section.uncheck();
    await page.getByLabel("Agent network only").check();
    await page.getByRole("button", { name: "Save account settings" }).click();
    const needsSection = page.getByText("Agent-network-only needs the agent-network section shown.");
    await needsSection.waitFor();
    expect(await section.getAttribute("aria-invalid")).toBe("true");
    // Fixed through the other flag, the finding clears too.
    await page.getByLabel("Agent network only").uncheck();
    expect(await needsSection.count()).toBe(0);
    await page.getByLabel("Agent network only").check();
    await page.getByRole("button", { name: "Save account settings" }).click();
    await needsSection.waitFor();
    await section.check();
    expect(await needsSection.count()).toBe(0);
    expect(await page.getByText("Fix the highlighted settings.").count()).toBe(0);
    await page.getByRole("button", { name: "Save account settings" }).click();
    await page.getByText("Saved.").waitFor();
    await expect.poll(() => nav.getByRole("link", { name: "Team" }).count()).toBe(0);
    await screenshot(page, "16-account-settings");
  });

  it("says the agent network is turned off when the account hides it, and keeps the pages that remain", async () => {
    const [account] = await stack.api<{ id: string; settings: Record<string, unknown> }[]>(
      "GET",
      "/api/accounts",
      owner.token,
    );
    if (!account) throw new Error("no account");
    const put = (settings: Record<string, unknown>) =>
      stack.api("PUT", `/api/accounts/${account.id}`, owner.token, { settings });
    await put({
      ...account.settings,
      agent_network_only: false,
      dashboard_features: { agent_network: false },
    });
    try {
      await go(page, "/");
      await page.getByRole("heading", { name: "Agent network turned off" }).waitFor();
      const nav = page.getByRole("navigation", { name: "Main" });
      expect(await nav.getByRole("link", { name: "Access logs" }).count()).toBe(0);
      expect(await nav.getByRole("link", { name: "My API keys" }).count()).toBe(1);
    } finally {
      await put(account.settings);
    }
  });

  it("lists models seen without a price for admins, with a way to set their rates", async () => {
    // Under a token cap only, an unpriced model is served (at $0) and logged.
    expect(await stack.chat(owner.token, { model: "gpt-9-preview" })).toBe(200);
    await stack.waitFor(
      () => stack.api<LogPage>("GET", "/api/agent-network/access-logs?model=gpt-9-preview", owner.token),
      (logs) => logs.total_records >= 1,
      "the unpriced request's row",
    );
    await go(page, "/config/providers");
    const table = page.getByRole("table", { name: "Models seen without a price" });
    await table.getByText("gpt-9-preview").waitFor();
    expect(await table.getByText("gpt-4o-mini").count()).toBe(0);
    expect(await table.getByRole("button", { name: "Set rates" }).count()).toBe(1);
    await screenshot(page, "08-providers");
  });

  it("refuses to delete the settings while a provider exists and says why", async () => {
    await go(page, "/config/settings");
    await page.getByRole("button", { name: "Delete settings…" }).click();
    await page.getByRole("button", { name: "Yes, delete the settings" }).click();
    const banner = page.getByRole("alert");
    await banner.getByText("Delete the account's providers before its settings").waitFor();
    expect(await banner.textContent()).not.toMatch(/Error \d/);
  });

  it("asks before a delete, naming the policies that use what would go", async () => {
    await go(page, "/config/providers");
    await page.getByRole("button", { name: "Delete OpenAI" }).click();
    const inUse = page.getByRole("dialog", { name: "The provider “OpenAI” is in use" });
    await inUse.getByText("policy “Everyone may use OpenAI”").waitFor();
    expect(await inUse.getByRole("button", { name: /^Delete/ }).count()).toBe(0);
    await inUse.getByRole("button", { name: "OK" }).click();
    await inUse.waitFor({ state: "hidden" });

    await go(page, "/config/guardrails");
    await page.getByRole("button", { name: "New guardrail" }).click();
    await page.getByLabel("Name").fill("Spare");
    await page.getByRole("button", { name: "Create guardrail" }).click();
    await page.getByRole("cell", { name: "Spare", exact: true }).waitFor();
    await page.getByRole("button", { name: "Delete Spare" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete the guardrail “Spare”?" });
    // Escape cancels; nothing is deleted without the button.
    await page.keyboard.press("Escape");
    await confirm.waitFor({ state: "hidden" });
    await page.getByRole("cell", { name: "Spare", exact: true }).waitFor();
    await page.getByRole("button", { name: "Delete Spare" }).click();
    await confirm.getByRole("button", { name: "Delete guardrail" }).click();
    await page.getByRole("cell", { name: "Spare", exact: true }).waitFor({ state: "detached" });
  });

  it("saves a policy weighing two providers 3:1 and shows its routing in the list", async () => {
    const backup = await stack.api<{ id: string }>("POST", "/api/agent-network/providers", owner.token, {
      provider_id: "openai_api",
      name: "OpenAI backup",
      upstream_url: `${stack.upstreamUrl}/v1`,
      api_key: "sk-test-upstream",
    });
    await go(page, "/config/policies");
    await page.getByRole("button", { name: "New policy" }).click();
    await page.getByLabel("Name").fill("Spread over both keys");
    await page.getByRole("group", { name: "Source groups" }).getByLabel("All").check();
    const granted = page.getByRole("group", { name: "Providers" });
    await granted.getByLabel("OpenAI", { exact: true }).check();
    await granted.getByLabel("OpenAI backup").check();
    const routing = page.getByRole("group", { name: "Routing" });
    expect(await routing.getByLabel("Max attempts").inputValue()).toBe("3");
    expect(await routing.getByLabel("Time budget (seconds)").inputValue()).toBe("60");
    await routing.getByLabel("Strategy").selectOption("weighted");
    await routing.getByLabel("Weight of OpenAI", { exact: true }).fill("3");
    await routing.getByLabel("Weight of OpenAI backup").fill("1");
    await page.getByRole("button", { name: "Create policy" }).click();
    await page.getByRole("cell", { name: "Spread over both keys", exact: true }).waitFor();
    await page.getByText("weighted 3:1").waitFor();

    const policies = await stack.api<Policy[]>("GET", "/api/agent-network/policies", owner.token);
    const weighted = policies.find((p) => p.name === "Spread over both keys");
    const openAi = weighted?.destination_provider_ids.find((id) => id !== backup.id) ?? "";
    expect(weighted?.routing).toMatchObject({
      strategy: "weighted",
      weights: { [openAi]: 3, [backup.id]: 1 },
    });
    expect(policies.find((p) => p.name === "Everyone may use OpenAI")).not.toHaveProperty("routing");
    await stack.api("DELETE", `/api/agent-network/policies/${weighted?.id}`, owner.token);
    await stack.api("DELETE", `/api/agent-network/providers/${backup.id}`, owner.token);
  });

  it("sends a member whose token was revoked back to sign-in, saying why", async () => {
    const revokedPage = await newPage(browser);
    const minted = await stack.api<{ plain_token: string; personal_access_token: { id: string } }>(
      "POST",
      `/api/users/${member.id}/tokens`,
      owner.token,
      { name: "to revoke", expires_in: 1 },
    );
    await revokedPage.goto(stack.baseUrl);
    await revokedPage.getByLabel("API token").fill(minted.plain_token);
    await revokedPage.getByRole("button", { name: "Sign in" }).click();
    await heading(revokedPage, "Overview").waitFor();
    await stack.api(
      "DELETE",
      `/api/users/${member.id}/tokens/${minted.personal_access_token.id}`,
      owner.token,
    );
    await go(revokedPage, "/logs");
    await revokedPage.getByText(/no longer accepted \(revoked or expired\)/).waitFor();
    await revokedPage.getByLabel("API token").waitFor();
    await revokedPage.context().close();
  });

  it("passes axe (WCAG 2.1 A and AA) on every page, in the light and the dark color scheme", async () => {
    // Team is hidden by now: an earlier test turned on agent-network-only.
    const pages = [
      ["/", "Overview"],
      ["/logs", "Access logs"],
      ["/sessions", "Sessions"],
      ["/consumption", "Consumption"],
      ["/agent", "Agent config"],
      ["/config/settings", "Gateway settings"],
      ["/config/providers", "Providers"],
      ["/config/policies", "Policies"],
      ["/config/guardrails", "Guardrails"],
      ["/config/budget-rules", "Budget rules"],
      ["/account", "Account settings"],
    ] as const;
    const found: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      for (const [path, title] of pages) {
        await go(page, path);
        await heading(page, title).waitFor({ timeout: 5_000 });
        // Judged with its data shown, not its loading state.
        await page.waitForFunction(() => !(document.body.textContent ?? "").includes("Loading"), undefined, {
          timeout: 10_000,
        });
        for (const violation of await axeViolations(page)) found.push(`${colorScheme} ${path}: ${violation}`);
        if (colorScheme === "dark" && path === "/") await screenshot(page, "17-overview-dark");
      }
    }
    await page.emulateMedia({ colorScheme: "light" });
    expect(found).toEqual([]);
  });

  it("ran every page above without anything refused by the Content-Security-Policy", () => {
    expect(cspViolations).toEqual([]);
  });
});
