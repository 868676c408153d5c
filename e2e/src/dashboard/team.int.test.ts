import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchChromium, newPage, screenshot } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

interface UserRow {
  id: string;
  email: string;
  role: string;
  auto_groups: string[];
  is_blocked: boolean;
}
interface GroupRow {
  id: string;
  name: string;
}

let stack: DashboardStack;
let browser: Browser;
let page: Page;
let memberPage: Page;
let owner: { token: string; user_id: string };
let member: { id: string; token: string };
const adaEmail = `ada-${Date.now()}@example.com`;
/** What the browser refused under the gateway's Content-Security-Policy, on any page of the run. */
const cspViolations: string[] = [];

const go = (p: Page, hash: string) => p.goto(`${stack.baseUrl}/#${hash}`);
const heading = (p: Page, name: string) => p.getByRole("heading", { level: 1, name });
const cell = (p: Page, name: string) => p.getByRole("cell", { name, exact: true });

/** A page whose clipboard the dashboard may write and the test may read. */
async function openPage(): Promise<Page> {
  const opened = await newPage(browser);
  await opened.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.baseUrl });
  opened.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return opened;
}

async function signIn(p: Page, token: string) {
  await p.goto(stack.baseUrl);
  await p.getByLabel("API token").fill(token);
  await p.getByRole("button", { name: "Sign in" }).click();
  await heading(p, "Overview").waitFor();
}

/** The status the API answers a token with: 200 while it works, 401 once revoked. */
const statusOf = async (token: string) =>
  (await fetch(`${stack.baseUrl}/api/users`, { headers: { authorization: `Token ${token}` } })).status;

const users = () => stack.api<UserRow[]>("GET", "/api/users", owner.token);
const groups = () => stack.api<GroupRow[]>("GET", "/api/groups", owner.token);

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack();
  const boot = await stack.bootstrap();
  owner = { token: boot.token, user_id: boot.user_id };
  page = await openPage();
  await signIn(page, owner.token);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("the Team page and API keys against the real stack", { timeout: 60_000 }, () => {
  it("invites a member, changes their role and groups, blocks and unblocks them", async () => {
    await go(page, "/team");
    await heading(page, "Team").waitFor();
    // The owner's own row offers neither Block nor Delete, and says why.
    await page.getByText("You cannot block or delete yourself.").waitFor();
    expect(await page.getByRole("button", { name: "Block Olivia Owner" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Delete Olivia Owner" }).count()).toBe(0);

    await page.getByLabel("New group name").fill("Reviewers");
    await page.getByRole("button", { name: "Create group" }).click();
    await cell(page, "Reviewers").waitFor();

    await page.getByRole("button", { name: "Invite user" }).click();
    await page.getByLabel("Email").fill(adaEmail);
    await page.getByLabel("Name", { exact: true }).fill("Ada Lovelace");
    await page.getByLabel("Role").selectOption("user");
    await page.getByRole("button", { name: "Create user" }).click();
    await cell(page, "Ada Lovelace").waitFor();
    const invited = (await users()).find((u) => u.email === adaEmail);
    expect(invited).toMatchObject({ role: "user", auto_groups: [], is_blocked: false });

    await page.getByRole("button", { name: "Edit Ada Lovelace" }).click();
    await page.getByLabel("Role").selectOption("auditor");
    await page.getByRole("group", { name: "Groups" }).getByLabel("Reviewers").check();
    await page.getByRole("button", { name: "Save user" }).click();
    const adaRow = page.getByRole("row").filter({ has: cell(page, "Ada Lovelace") });
    await adaRow.getByRole("cell", { name: "Auditor", exact: true }).waitFor();
    await adaRow.getByRole("cell", { name: "Reviewers", exact: true }).waitFor();
    const reviewers = (await groups()).find((g) => g.name === "Reviewers");
    expect((await users()).find((u) => u.email === adaEmail)).toMatchObject({
      role: "auditor",
      auto_groups: [reviewers?.id],
    });

    await page.getByRole("button", { name: "Block Ada Lovelace" }).click();
    await page.getByRole("button", { name: "Unblock Ada Lovelace" }).waitFor();
    await adaRow.getByText("blocked", { exact: true }).waitFor();
    await expect.poll(async () => (await users()).find((u) => u.email === adaEmail)?.is_blocked).toBe(true);
    await page.getByRole("button", { name: "Unblock Ada Lovelace" }).click();
    await page.getByRole("button", { name: "Block Ada Lovelace" }).waitFor();
    await expect.poll(async () => (await users()).find((u) => u.email === adaEmail)?.is_blocked).toBe(false);
  });

  it("creates, renames and deletes a group; one in use names what uses it instead", async () => {
    await page.getByLabel("New group name").fill("Temp");
    await page.getByRole("button", { name: "Create group" }).click();
    await cell(page, "Temp").waitFor();
    await page.getByRole("button", { name: "Rename Temp" }).click();
    await page.getByRole("form", { name: "Rename group Temp" }).getByLabel("New name").fill("Scratch");
    await page.getByRole("button", { name: "Save name" }).click();
    await cell(page, "Scratch").waitFor();
    await page.getByRole("button", { name: "Delete Scratch" }).click();
    await page
      .getByRole("dialog", { name: "Delete the group “Scratch”?" })
      .getByRole("button", { name: "Delete group" })
      .click();
    await cell(page, "Scratch").waitFor({ state: "detached" });
    expect((await groups()).map((g) => g.name)).toEqual(["All", "Reviewers"]);

    const reviewers = (await groups()).find((g) => g.name === "Reviewers");
    await stack.api("POST", "/api/agent-network/budget-rules", owner.token, {
      name: "Reviewers cap",
      target_groups: [reviewers?.id],
      limits: {
        token_limit: { enabled: true, group_cap: 10_000, user_cap: 0, window_seconds: 3600 },
        budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
      },
    });
    await page.getByRole("button", { name: "Delete Reviewers" }).click();
    const inUse = page.getByRole("dialog", { name: "The group “Reviewers” is in use" });
    await inUse.getByText("budget rule “Reviewers cap”").waitFor();
    expect(await inUse.getByRole("button", { name: /^Delete/ }).count()).toBe(0);
    await inUse.getByRole("button", { name: "OK" }).click();
    await inUse.waitFor({ state: "hidden" });
    await screenshot(page, "18-team");
  });

  it("creates a key for a member, shows its secret once with a copy button, and revokes it", async () => {
    await page.getByRole("button", { name: "API keys of Ada Lovelace" }).click();
    const keys = page.getByRole("region", { name: "API keys of Ada Lovelace" });
    await keys.getByText("No API keys").waitFor();
    await keys.getByLabel("Key name").fill("ci");
    await keys.getByLabel("Expires in (days)").fill("7");
    await keys.getByRole("button", { name: "Create API key" }).click();

    const panel = page.getByRole("region", { name: "New API key “ci”" });
    await panel.getByText("it will not be shown again").waitFor();
    const plain = await panel.getByRole("textbox", { name: "API key", exact: true }).inputValue();
    expect(plain).toMatch(/^agn_/);
    await panel.getByRole("button", { name: "Copy key" }).click();
    await panel.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(plain);
    expect(await statusOf(plain)).toBe(200);

    await panel.getByRole("button", { name: "Done, hide the key" }).click();
    await panel.waitFor({ state: "detached" });
    expect(await page.getByRole("textbox", { name: "API key", exact: true }).count()).toBe(0);
    expect(await page.getByText(plain).count()).toBe(0);
    const table = page.getByRole("table", { name: "API keys of Ada Lovelace" });
    await table.getByRole("cell", { name: "ci", exact: true }).waitFor();

    await table.getByRole("button", { name: "Revoke ci" }).click();
    await page
      .getByRole("dialog", { name: "Revoke the API key “ci”?" })
      .getByRole("button", { name: "Revoke key" })
      .click();
    await keys.getByText("No API keys").waitFor();
    expect(await statusOf(plain)).toBe(401);
  });

  it("lets a member list, create and revoke their own keys on My API keys", async () => {
    member = await stack.addMember(owner.token, "Mia Member");
    memberPage = await openPage();
    await signIn(memberPage, member.token);
    const nav = memberPage.getByRole("navigation", { name: "Main" });
    expect(await nav.getByRole("link", { name: "Team" }).count()).toBe(0);
    await nav.getByRole("link", { name: "My API keys" }).click();
    await heading(memberPage, "My API keys").waitFor();
    const table = memberPage.getByRole("table", { name: "Your API keys" });
    await table.getByRole("cell", { name: "dashboard-test", exact: true }).waitFor();

    await memberPage.getByLabel("Key name").fill("laptop");
    await memberPage.getByLabel("Expires in (days)").fill("400");
    await memberPage.getByRole("button", { name: "Create API key" }).click();
    await memberPage.getByText("Enter a whole number of days from 1 to 365.").waitFor();
    await memberPage.getByLabel("Expires in (days)").fill("30");
    await memberPage.getByRole("button", { name: "Create API key" }).click();
    const panel = memberPage.getByRole("region", { name: "New API key “laptop”" });
    const plain = await panel.getByRole("textbox", { name: "API key", exact: true }).inputValue();
    expect(await statusOf(plain)).toBe(200);
    await screenshot(memberPage, "19-my-keys");
    await panel.getByRole("button", { name: "Done, hide the key" }).click();
    await table.getByRole("cell", { name: "laptop", exact: true }).waitFor();

    await table.getByRole("button", { name: "Revoke laptop" }).click();
    const confirm = memberPage.getByRole("dialog", { name: "Revoke the API key “laptop”?" });
    await confirm.getByText("If you signed in to this dashboard with it, you are signed out.").waitFor();
    await confirm.getByRole("button", { name: "Revoke key" }).click();
    await table.getByRole("cell", { name: "laptop", exact: true }).waitFor({ state: "detached" });
    expect(await statusOf(plain)).toBe(401);
    await heading(memberPage, "My API keys").waitFor();
  });

  it("passes axe (WCAG 2.1 A and AA) on Team and My API keys, in the light and the dark color scheme", async () => {
    const views = [
      [page, "/team", "Team"],
      [page, "/keys", "My API keys"],
      [memberPage, "/keys", "My API keys"],
    ] as const;
    const found: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      for (const [p, path, title] of views) {
        await p.emulateMedia({ colorScheme });
        await go(p, path);
        await heading(p, title).waitFor();
        await p.waitForFunction(() => !(document.body.textContent ?? "").includes("Loading"), undefined, {
          timeout: 10_000,
        });
        for (const violation of await axeViolations(p)) found.push(`${colorScheme} ${path}: ${violation}`);
      }
    }
    // The shown-once panel and the revoke dialog, judged open.
    await memberPage.getByLabel("Key name").fill("axe");
    await memberPage.getByRole("button", { name: "Create API key" }).click();
    await memberPage.getByRole("region", { name: "New API key “axe”" }).waitFor();
    for (const violation of await axeViolations(memberPage)) found.push(`dark panel: ${violation}`);
    await memberPage.getByRole("button", { name: "Done, hide the key" }).click();
    await memberPage.getByRole("button", { name: "Revoke axe" }).click();
    await memberPage.getByRole("dialog", { name: "Revoke the API key “axe”?" }).waitFor();
    for (const violation of await axeViolations(memberPage)) found.push(`dark dialog: ${violation}`);
    await memberPage.getByRole("button", { name: "Cancel" }).click();
    expect(found).toEqual([]);
  });

  it("signs a member out, saying why, when they revoke the key they signed in with", async () => {
    await go(memberPage, "/keys");
    await memberPage.getByRole("button", { name: "Revoke dashboard-test" }).click();
    await memberPage
      .getByRole("dialog", { name: "Revoke the API key “dashboard-test”?" })
      .getByRole("button", { name: "Revoke key" })
      .click();
    await memberPage.getByText(/no longer accepted \(revoked or expired\)/).waitFor();
    await memberPage.getByLabel("API token").waitFor();
    expect(await statusOf(member.token)).toBe(401);
  });

  it("ran both pages without anything refused by the Content-Security-Policy", () => {
    expect(cspViolations).toEqual([]);
  });
});
