import { readFile } from "node:fs/promises";
import type { AuditPage, AuditVerification, Group, User } from "@agentnet/contracts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchChromium, newPage, screenshot } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

let stack: DashboardStack;
let browser: Browser;
let page: Page;
let owner: { token: string };
/** What the browser refused under the gateway's Content-Security-Policy, on any page of the run. */
const cspViolations: string[] = [];

const go = (p: Page, hash: string) => p.goto(`${stack.baseUrl}/#${hash}`);
const heading = (p: Page, name: string) => p.getByRole("heading", { level: 1, name });
const entryRows = (p: Page) => p.getByRole("table", { name: "Audit entries" }).locator("tbody tr");
/** The action cell of each row on the page, top to bottom. */
const actionsShown = (p: Page) => entryRows(p).locator("td:nth-child(3)").allTextContents();
const trail = (token: string, query = "") => stack.api<AuditPage>("GET", `/api/audit${query}`, token);

async function openPage(token: string): Promise<Page> {
  const opened = await newPage(browser);
  await opened.context().addInitScript((t) => sessionStorage.setItem("agentnet.token", t), token);
  opened.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return opened;
}

async function applyFilters(p: Page, fill: (form: ReturnType<Page["getByRole"]>) => Promise<void>) {
  const form = p.getByRole("form", { name: "Filters" });
  await fill(form);
  await form.getByRole("button", { name: "Apply filters" }).click();
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack();
  const boot = await stack.bootstrap();
  owner = { token: boot.token };
  page = await openPage(owner.token);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("the Audit trail page against the real stack", { timeout: 60_000 }, () => {
  it("lists the owner's changes newest first, filters them by action, and opens one with before and after", async () => {
    const group = await stack.api<Group>("POST", "/api/groups", owner.token, { name: "eng" });
    await stack.api("PUT", `/api/groups/${group.id}`, owner.token, { name: "platform" });

    await go(page, "/");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit trail" }).click();
    await heading(page, "Audit trail").waitFor();
    await expect
      .poll(() => actionsShown(page))
      .toEqual(["groups.update", "groups.create", "accounts.bootstrap"]);
    const renameRow = entryRows(page).first();
    const target = renameRow.locator("td").nth(3);
    expect(await target.textContent()).toBe(`Group${group.id}`);
    expect(await target.locator(".audit-sub").textContent()).toBe(group.id);
    await renameRow.getByText("Succeeded", { exact: true }).waitFor();

    await applyFilters(page, (form) => form.getByLabel("Action").fill("groups.create"));
    await expect.poll(() => actionsShown(page)).toEqual(["groups.create"]);
    expect(page.url()).toContain("action=groups.create");
    await applyFilters(page, (form) => form.getByLabel("Action").fill("groups"));
    await expect.poll(() => actionsShown(page)).toEqual(["groups.update", "groups.create"]);

    const [stored] = (await trail(owner.token, "?action=groups.update")).entries;
    await entryRows(page).first().click();
    const drawer = page.getByRole("dialog", { name: `Audit entry ${stored?.seq}` });
    await drawer.getByText(/^Changed: (.+, )?name(, .+)?\.$/).waitFor();
    const before = drawer.getByRole("figure", { name: "Before" });
    const after = drawer.getByRole("figure", { name: "After" });
    // The changed field is marked on both sides; the unchanged id is not.
    expect(await before.locator("mark").filter({ hasText: '"name": "eng"' }).count()).toBe(1);
    expect(await after.locator("mark").filter({ hasText: '"name": "platform"' }).count()).toBe(1);
    expect(await after.locator("mark").filter({ hasText: '"id"' }).count()).toBe(0);
    await after.getByText(`"id": "${group.id}"`).waitFor();
    const field = (name: string) =>
      drawer
        .locator(".fields div")
        .filter({ has: page.getByText(name, { exact: true }) })
        .locator("dd");
    expect(await field("API key id").textContent()).toBe(stored?.actor.token_id);
    expect(await field("Address").textContent()).toMatch(/127\.0\.0\.1/);
    expect(await field("User agent").textContent()).toBe(stored?.actor.user_agent ?? "—");
    expect(await field("Previous hash").textContent()).toBe(stored?.prev_hash);
    expect(await field("Hash").textContent()).toMatch(/^[0-9a-f]{64}$/);
    expect(page.url()).toContain(`seq=${stored?.seq}`);
    expect(await axeViolations(page)).toEqual([]);
    await drawer.getByRole("button", { name: "Every entry for this group" }).click();
    await drawer.waitFor({ state: "detached" });
    await expect.poll(() => actionsShown(page)).toEqual(["groups.update", "groups.create"]);
    expect(page.url()).toContain(`target_type=group&target_id=${group.id}`);
  });

  it("verifies the chain and says it is intact", async () => {
    await page.getByRole("form", { name: "Filters" }).getByRole("button", { name: "Clear" }).click();
    await expect.poll(() => entryRows(page).count()).toBe(3);
    await page.getByRole("button", { name: "Verify chain" }).click();
    const verification = await stack.api<AuditVerification>("GET", "/api/audit/verify", owner.token);
    expect(verification).toMatchObject({ intact: true, first_seq: 1 });
    await page
      .getByRole("status")
      .filter({
        hasText: `Intact: ${verification.checked} entries checked (seq 1–${verification.last_seq})`,
      })
      .waitFor();
  });

  it("exports the filtered trail as JSON lines and CSV, with the caller's token", async () => {
    await applyFilters(page, (form) => form.getByLabel("Action").fill("groups"));
    await expect.poll(() => actionsShown(page)).toEqual(["groups.update", "groups.create"]);
    const saved = async (button: string) => {
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("button", { name: button }).click(),
      ]);
      const path = await download.path();
      return { name: download.suggestedFilename(), text: await readFile(path, "utf8") };
    };
    const jsonl = await saved("Export JSON lines");
    expect(jsonl.name).toMatch(/^audit-.+\.jsonl$/);
    const lines = jsonl.text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { action: string });
    expect(lines.map((entry) => entry.action)).toEqual(["groups.update", "groups.create"]);
    const csv = await saved("Export CSV");
    expect(csv.name).toMatch(/^audit-.+\.csv$/);
    const rows = csv.text.trim().split("\r\n");
    expect(rows[0]).toMatch(/^seq,at,/);
    // The action column found by its header: the export gains columns (actor_session_id).
    const action = (rows[0] ?? "").split(",").indexOf("action");
    expect(rows.slice(1).map((row) => row.split(",")[action])).toEqual(["groups.update", "groups.create"]);
  });

  it("hides the page from a member, whose refused change the owner then finds", async () => {
    const member = await stack.addMember(owner.token, "Mia Member");
    const email = (await stack.api<User[]>("GET", "/api/users", owner.token)).find(
      (u) => u.id === member.id,
    )?.email;
    const refused = await fetch(`${stack.baseUrl}/api/groups`, {
      method: "POST",
      headers: { authorization: `Token ${member.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "not mine to make" }),
    });
    expect(refused.status).toBe(403);

    const memberPage = await openPage(member.token);
    await go(memberPage, "/");
    await heading(memberPage, "Overview").waitFor();
    const nav = memberPage.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "My API keys" }).waitFor();
    expect(await nav.getByRole("link", { name: "Audit trail" }).count()).toBe(0);
    await go(memberPage, "/audit");
    await heading(memberPage, "Page not found").waitFor();
    await memberPage.getByText("for your role").waitFor();
    expect(await memberPage.getByRole("table", { name: "Audit entries" }).count()).toBe(0);
    for (const path of ["/api/audit", "/api/audit/verify", "/api/audit/export?format=csv"]) {
      const answer = await fetch(`${stack.baseUrl}${path}`, {
        headers: { authorization: `Token ${member.token}` },
      });
      expect(answer.status, path).toBe(403);
    }
    await memberPage.context().close();

    await go(page, "/audit?outcome=refused");
    await expect.poll(() => actionsShown(page)).toEqual(["groups.create"]);
    const row = entryRows(page).first();
    await row.getByText("Refused", { exact: true }).waitFor();
    expect(await row.locator("td").nth(1).textContent()).toBe(email);
    expect(await row.locator("td").nth(4).locator(".audit-sub").textContent()).toBe("403 forbidden");
  });

  it("passes axe in both color schemes, and nothing broke the Content-Security-Policy", async () => {
    await go(page, "/audit");
    await page.reload();
    // A reload loads the app and its first page again: on a busy machine that takes seconds.
    await expect.poll(() => entryRows(page).count()).toBeGreaterThan(3);
    await page.getByRole("button", { name: "Verify chain" }).click();
    await page.getByRole("status").filter({ hasText: "Intact:" }).waitFor();
    await screenshot(page, "27-audit");
    const found: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      for (const violation of await axeViolations(page)) found.push(`${colorScheme}: ${violation}`);
      await entryRows(page).filter({ hasText: "groups.update" }).click();
      await page.getByRole("dialog").getByText("Changed:").waitFor();
      for (const violation of await axeViolations(page)) found.push(`${colorScheme} drawer: ${violation}`);
      await page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
      await page.getByRole("dialog").waitFor({ state: "detached" });
    }
    await page.emulateMedia({ colorScheme: "light" });
    expect(found).toEqual([]);
    expect(cspViolations).toEqual([]);
  });

  it("pages to older entries by seq, and back to the newest", async () => {
    const { entries } = await trail(owner.token, "?limit=1");
    const newest = entries[0]?.seq ?? 0;
    // A page holds 50 entries: two more than that in all, the first group's create and the bootstrap left over.
    for (let i = newest; i < 52; i += 1)
      await stack.api("POST", "/api/groups", owner.token, { name: `g${i}` });
    await go(page, "/audit");
    await page.reload();
    await page.getByText("Seq 52 down to 3").waitFor();
    expect(await entryRows(page).count()).toBe(50);
    await page.getByRole("button", { name: "Older" }).click();
    await expect.poll(() => actionsShown(page)).toEqual(["groups.create", "accounts.bootstrap"]);
    await page.getByText("Seq 2 down to 1 · no older entries").waitFor();
    expect(page.url()).toContain("before_seq=3");
    expect(await page.getByRole("button", { name: "Older" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Newest" }).click();
    await page.getByText("Seq 52 down to 3").waitFor();

    // A link to an entry that is not on the page reads it by seq.
    await go(page, "/audit?seq=1");
    await page
      .getByRole("dialog", { name: "Audit entry 1" })
      .getByText("accounts.bootstrap")
      .first()
      .waitFor();
  });
});
