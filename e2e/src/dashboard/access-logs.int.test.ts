import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchChromium, newPage, screenshot } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

interface LogRow {
  id: string;
  session_id: string;
  user_id: string;
  request_prompt?: string;
  response_completion?: string;
  request_prompt_truncated?: boolean;
}
interface LogPage {
  total_records: number;
  data: LogRow[];
}

const PROMPT = "Summarise the release notes in one line.";
const REPLY = "Hello from upstream";

let stack: DashboardStack;
let browser: Browser;
let page: Page;
let owner: { token: string; user_id: string };
let member: { id: string; token: string };
/** Every row of the owner's account, newest first, once the traffic is in. */
let logged: LogRow[];
/** What the browser refused under the gateway's Content-Security-Policy, on any page of the run. */
const cspViolations: string[] = [];

const go = (p: Page, hash: string) => p.goto(`${stack.baseUrl}/#${hash}`);
const table = (p: Page) => p.getByRole("table", { name: "Access log entries" });
const rows = (p: Page) => table(p).locator("tbody tr");
const readLogs = (token: string) =>
  stack.api<LogPage>("GET", "/api/agent-network/access-logs?page_size=100", token);

/** A signed-in page whose clipboard the dashboard may write and the test may read. */
async function openPage(token: string): Promise<Page> {
  const opened = await newPage(browser);
  await opened.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.baseUrl });
  await opened.context().addInitScript((t) => sessionStorage.setItem("agentnet.token", t), token);
  opened.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return opened;
}

const clipboard = (p: Page) => p.evaluate(() => navigator.clipboard.readText());

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack();
  const boot = await stack.bootstrap();
  owner = { token: boot.token, user_id: boot.user_id };
  // Prompt capture needs it on in the settings and a guardrail of the authorising policy asking for it.
  await stack.api("POST", "/api/agent-network/settings", owner.token, {
    proxy_address: "proxy.example.com",
    enable_prompt_collection: true,
  });
  const guardrail = await stack.api<{ id: string }>("POST", "/api/agent-network/guardrails", owner.token, {
    name: "Capture prompts",
    checks: {
      model_allowlist: { enabled: false, models: [] },
      prompt_capture: { enabled: true, redact_pii: false },
    },
  });
  await stack.openAiForEveryone(owner.token, { guardrail_ids: [guardrail.id] });
  member = await stack.addMember(owner.token, "Mia Member");
  // The proxy reads configuration from a snapshot refreshed every 500 ms.
  await stack.waitFor(
    () => stack.chat(owner.token, { session: "release-notes" }),
    (s) => s === 200,
    "a first chat",
  );
  const statuses = [
    await stack.chat(owner.token, { session: "release-notes" }),
    await stack.chat(owner.token),
    await stack.chat(member.token, { session: "mia-refactor" }),
  ];
  expect(statuses).toEqual([200, 200, 200]);
  const logs = await stack.waitFor(
    () => readLogs(owner.token),
    (l) => l.total_records >= 4 && l.data.every((e) => e.request_prompt !== undefined),
    "4 access-log rows with captured prompts",
  );
  logged = logs.data;
  page = await openPage(owner.token);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("access logs for operators", { timeout: 60_000 }, () => {
  it("names users and providers with links, and links each row to its session", async () => {
    await go(page, "/logs");
    await expect.poll(() => rows(page).count()).toBe(4);
    const ownerLink = table(page).getByRole("link", { name: "Olivia Owner" }).first();
    expect(await ownerLink.getAttribute("href")).toBe(`#/logs?user_id=${owner.user_id}`);
    expect(await table(page).getByRole("link", { name: "Mia Member" }).count()).toBe(1);
    const providerLink = table(page).getByRole("link", { name: "OpenAI" }).first();
    expect(await providerLink.getAttribute("href")).toBe("#/config/providers");
    expect(await table(page).getByRole("link", { name: "release-notes" }).count()).toBe(2);
    await table(page).getByRole("link", { name: "mia-refactor" }).click();
    await page.getByRole("heading", { level: 1, name: "Session mia-refactor" }).waitFor();
    expect(page.url()).toContain("#/sessions/mia-refactor");
  });

  it("exports every page of the filter as CSV and as JSON, built in the browser", async () => {
    // Two rows a page: the export still holds all four.
    await go(page, "/logs?page_size=2");
    await expect.poll(() => rows(page).count()).toBe(2);
    const [csv] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    expect(csv.suggestedFilename()).toMatch(/^access-logs-[\dT-]+Z\.csv$/);
    const records = readFileSync(await csv.path(), "utf8")
      .split("\r\n")
      .filter(Boolean);
    expect(records[0]).toMatch(/^id,service_id,timestamp,status_code,/);
    expect(
      records
        .slice(1)
        .map((r) => r.split(",")[0])
        .sort(),
    ).toEqual(logged.map((e) => e.id).sort());
    expect(records[1]).toContain(REPLY);
    await page.getByText(/^Exported 4 requests to access-logs-.+\.csv\.$/).waitFor();

    await page.getByLabel("Session id").fill("release-notes");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => page.url()).toContain("session_id=release-notes");
    const [json] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export JSON" }).click(),
    ]);
    const exported = JSON.parse(readFileSync(await json.path(), "utf8")) as LogRow[];
    expect(exported.map((e) => e.session_id)).toEqual(["release-notes", "release-notes"]);
    expect(exported[0]?.request_prompt).toContain(PROMPT);
  });

  it("puts an open row in the URL, reopens it from a reload, copies the link and closes it", async () => {
    await go(page, "/logs");
    await expect.poll(() => rows(page).count()).toBe(4);
    const newest = logged[0]?.id ?? "";
    await rows(page).first().locator("td").first().click();
    const drawer = page.getByRole("dialog", { name: `Request ${newest}` });
    await drawer.waitFor();
    expect(page.url()).toContain(`entry=${newest}`);
    await page.reload();
    await drawer.waitFor();
    await drawer.getByRole("button", { name: "Copy link" }).click();
    expect(await clipboard(page)).toBe(`${stack.baseUrl}/#/logs?entry=${newest}`);
    await page.keyboard.press("Escape");
    await drawer.waitFor({ state: "detached" });
    expect(page.url()).not.toContain("entry=");

    // A link to a row that is not on the page shown: it is read by id.
    const oldest = logged.at(-1)?.id ?? "";
    await go(page, `/logs?page_size=1&entry=${oldest}`);
    // A fresh document: nothing of the list shown before can hold the row.
    await page.reload();
    await page.getByRole("dialog", { name: `Request ${oldest}` }).waitFor();
    await expect.poll(() => rows(page).count()).toBe(1);
    await page.keyboard.press("Escape");
    await go(page, "/logs?entry=no-such-request");
    await page.getByText("No request no-such-request").waitFor();
  });

  it("shows the prompt and the completion as a conversation, names linked, each message copyable", async () => {
    const entry = logged.find((e) => e.session_id === "release-notes");
    await go(page, `/logs?entry=${entry?.id}`);
    const drawer = page.getByRole("dialog");
    const conversation = drawer.getByRole("list", { name: "Conversation" });
    await conversation.waitFor();
    const turns = conversation.locator("li");
    expect(await turns.count()).toBe(2);
    expect(await turns.nth(0).textContent()).toMatch(new RegExp(`^User 1.*${PROMPT}`));
    expect(await turns.nth(1).textContent()).toContain(REPLY);
    await screenshot(page, "20-access-log-conversation");
    await drawer.getByRole("button", { name: "Copy user 1 message" }).click();
    expect(await clipboard(page)).toBe(PROMPT);
    await drawer.getByRole("button", { name: "Copy completion message" }).click();
    expect(await clipboard(page)).toBe(REPLY);
    expect(await drawer.getByRole("link", { name: "OpenAI", exact: true }).getAttribute("href")).toBe(
      "#/config/providers",
    );
    expect(
      await drawer.getByRole("link", { name: "Everyone may use OpenAI", exact: true }).getAttribute("href"),
    ).toBe("#/config/policies");
    expect(await drawer.getByRole("link", { name: "All", exact: true }).getAttribute("href")).toBe("#/team");
    expect(await drawer.getByRole("link", { name: "release-notes" }).getAttribute("href")).toBe(
      "#/sessions/release-notes",
    );
  });

  it("passes axe with live tail on and with the drawer open, in the light and the dark color scheme", async () => {
    const found: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      await go(page, "/logs?live=1");
      await page.getByText(/Live tail is on/).waitFor();
      await expect.poll(() => rows(page).count()).toBe(4);
      for (const violation of await axeViolations(page)) found.push(`${colorScheme} table: ${violation}`);
      await go(page, `/logs?live=1&entry=${logged[0]?.id}`);
      await page.getByRole("dialog").getByRole("list", { name: "Conversation" }).waitFor();
      for (const violation of await axeViolations(page)) found.push(`${colorScheme} drawer: ${violation}`);
    }
    await page.emulateMedia({ colorScheme: "light" });
    expect(found).toEqual([]);
  });

  it("tails live: a new request shows up without a reload, and the tail pauses while a row is open", async () => {
    await go(page, "/logs?sort_by=cost_usd&page=2&page_size=2");
    await page.getByLabel("Live tail").check();
    await expect.poll(() => page.url()).toContain("live=1");
    expect(page.url()).not.toContain("sort_by");
    expect(page.url()).not.toContain("page=2");
    await expect.poll(() => rows(page).count()).toBe(2);
    const status = page.getByRole("status").filter({ hasText: "Live tail" });
    await status.getByText(/Live tail is on/).waitFor();
    await page.evaluate(() => Object.assign(window, { stillThisPage: true }));

    expect(await stack.chat(member.token, { session: "live-check" })).toBe(200);
    await table(page).getByRole("link", { name: "live-check" }).waitFor({ timeout: 20_000 });
    await status.getByText(/Live tail: 1 new request at/).waitFor();
    expect(await page.evaluate(() => "stillThisPage" in window)).toBe(true);

    await rows(page).first().locator("td").first().click();
    await status.getByText("Live tail is paused while a request is open.").waitFor();
    await page.keyboard.press("Escape");
    await page.getByLabel("Live tail").uncheck();
    await expect.poll(() => page.url()).not.toContain("live=1");
  });

  it("shows a member their own rows with ids in place of names they may not read, without errors", async () => {
    const memberPage = await openPage(member.token);
    await go(memberPage, "/logs");
    await expect.poll(() => rows(memberPage).count()).toBe(2);
    expect(await table(memberPage).getByRole("link", { name: "OpenAI" }).count()).toBe(0);
    // The row carries its provider's name; a member just cannot follow it to the configuration.
    expect(await table(memberPage).getByRole("cell", { name: "OpenAI", exact: true }).count()).toBe(2);
    await rows(memberPage).first().locator("td").first().click();
    await memberPage.getByRole("dialog").getByRole("list", { name: "Conversation" }).waitFor();
    expect(await memberPage.getByRole("alert").count()).toBe(0);
    await memberPage.close();
  });

  it("reads a long prompt whole into the drawer where the list carries only its start", async () => {
    const long = `${"Explain this code. ".repeat(1_500)}END OF THE LONG PROMPT`;
    expect(await stack.chat(owner.token, { session: "long-prompt", content: long })).toBe(200);
    const listed = await stack.waitFor(
      () => readLogs(owner.token),
      (l) => l.data.some((e) => e.session_id === "long-prompt"),
      "the long prompt's row",
    );
    const row = listed.data.find((e) => e.session_id === "long-prompt");
    // 100 to a page: each entry's share of one answer holds about 10 KB of its texts.
    expect(row?.request_prompt_truncated).toBe(true);
    expect(row?.request_prompt).not.toContain("END OF THE LONG PROMPT");

    await go(page, "/logs");
    await table(page).getByRole("link", { name: "long-prompt" }).waitFor({ timeout: 15_000 });
    await rows(page).first().locator("td").first().click();
    const drawer = page.getByRole("dialog", { name: `Request ${row?.id}` });
    await drawer.getByText(/END OF THE LONG PROMPT/).waitFor();
    expect(await drawer.getByRole("alert").count()).toBe(0);
    await page.keyboard.press("Escape");
  });

  it("ran without anything refused by the Content-Security-Policy", () => {
    expect(cspViolations).toEqual([]);
  });
});
