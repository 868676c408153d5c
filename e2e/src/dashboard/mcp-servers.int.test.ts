import type { McpServer, Policy } from "@agentnet/contracts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchChromium, newPage } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

let stack: DashboardStack;
let browser: Browser;
let page: Page;
/** A second tab of the owner's, opened before the grant: what it knows of the policies is stale. */
let staleTab: Page;
let owner: { token: string };
/** What the browser refused under the gateway's Content-Security-Policy, on any page of the run. */
const cspViolations: string[] = [];

const SECRET = "Bearer mcp-secret-7f3a";
const URL_V1 = "http://mcp.example.com/mcp";
const URL_V2 = "http://mcp.example.com/v2";

const go = (p: Page, hash: string) => p.goto(`${stack.baseUrl}/#${hash}`);
const heading = (p: Page, name: string) => p.getByRole("heading", { level: 1, name });
const cell = (p: Page, name: string) => p.getByRole("cell", { name, exact: true });
const servers = () => stack.api<McpServer[]>("GET", "/api/agent-network/mcp-servers", owner.token);
const policies = () => stack.api<Policy[]>("GET", "/api/agent-network/policies", owner.token);

/** A page signed in with `token` (kept in sessionStorage, as the sign-in form keeps it). */
async function signedInPage(token: string): Promise<Page> {
  const opened = await newPage(browser);
  opened.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  await opened.context().addInitScript((t) => sessionStorage.setItem("agentnet.token", t), token);
  await opened.goto(stack.baseUrl);
  await heading(opened, "Overview").waitFor();
  return opened;
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack();
  const boot = await stack.bootstrap();
  owner = { token: boot.token };
  page = await signedInPage(owner.token);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/**
 * The MCP servers page and a policy's MCP grants (docs/API.md, "MCP servers"): a server's
 * credential is write-only (shown by kind and header name, kept on an edit that leaves it empty), a
 * policy grants it with tool filters, and the API's refusals (400 on a field, 409 on a taken name and
 * on deleting a granted server) are shown where the user acts.
 */
describe("MCP servers in the dashboard", { timeout: 60_000 }, () => {
  it("creates a server through the page, showing the API's field error, and lists it without its secret", async () => {
    await go(page, "/config/mcp-servers");
    await heading(page, "MCP servers").waitFor();
    await page.getByText("No MCP servers yet").waitFor();
    await page.getByRole("button", { name: "New MCP server" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Issues");
    await page.getByLabel("URL").fill(URL_V1);
    await page.getByLabel("Credential kind").selectOption("header");
    expect(await page.getByLabel("Header name").inputValue()).toBe("Authorization");
    await page.getByLabel("Header value").fill(SECRET);
    await page.getByLabel("Price per call (USD)").fill("0.002");
    await page.getByRole("button", { name: "Create MCP server" }).click();
    // The API's 400, next to the field it names.
    await page
      .getByText("name must be lower-case letters and digits, words joined by single hyphens", {
        exact: true,
      })
      .waitFor();
    expect(await page.getByLabel("Name", { exact: true }).getAttribute("aria-invalid")).toBe("true");

    await page.getByLabel("Name", { exact: true }).fill("issues");
    await page.getByRole("button", { name: "Create MCP server" }).click();
    await cell(page, "issues").waitFor();
    const row = page.getByRole("row").filter({ has: cell(page, "issues") });
    for (const shown of [URL_V1, "Streamable HTTP", "header Authorization", "enabled", "$0.002"]) {
      await row.getByRole("cell", { name: shown, exact: true }).waitFor();
    }
    expect(await page.content()).not.toContain("mcp-secret");

    const [stored] = await servers();
    expect(stored).toMatchObject({
      name: "issues",
      url: URL_V1,
      credential: { kind: "header", header_name: "Authorization" },
      price_per_call: 0.002,
    });
    expect(JSON.stringify(stored)).not.toContain("mcp-secret");
  });

  it("says a name is taken (409)", async () => {
    await page.getByRole("button", { name: "New MCP server" }).click();
    await page.getByLabel("Name", { exact: true }).fill("issues");
    await page.getByLabel("URL").fill("http://other.example.com/mcp");
    await page.getByRole("button", { name: "Create MCP server" }).click();
    await page.getByRole("alert").getByText("An MCP server named issues already exists").waitFor();
    await page.getByRole("button", { name: "Cancel" }).click();
    expect((await servers()).map((s) => s.url)).toEqual([URL_V1]);
  });

  it("edits the server keeping its credential when the value is left empty", async () => {
    await page.getByRole("button", { name: "Edit issues" }).click();
    const value = page.getByLabel("Header value");
    expect(await value.inputValue()).toBe("");
    expect(await value.getAttribute("placeholder")).toBe("•••••• (stored)");
    await page.getByText("Write-only: leave empty to keep the value stored for Authorization.").waitFor();
    // The value cannot be read back to send under another header name: it must be typed again.
    await page.getByLabel("Header name").fill("X-Api-Key");
    await page.getByRole("button", { name: "Save MCP server" }).click();
    await page.getByText("enter the value again to send it as X-Api-Key").waitFor();
    await page.getByLabel("Header name").fill("Authorization");
    await page.getByLabel("URL").fill(URL_V2);
    await page.getByRole("button", { name: "Save MCP server" }).click();
    await cell(page, URL_V2).waitFor();
    const [stored] = await servers();
    expect(stored).toMatchObject({
      url: URL_V2,
      credential: { kind: "header", header_name: "Authorization" },
      price_per_call: 0.002,
    });
  });

  it("shows an auditor the servers, without any button that writes", async () => {
    const auditor = await stack.api<{ id: string }>("POST", "/api/users", owner.token, {
      email: `auditor-${Date.now()}@example.com`,
      name: "Ari Auditor",
      role: "auditor",
    });
    const token = await stack.api<{ plain_token: string }>(
      "POST",
      `/api/users/${auditor.id}/tokens`,
      owner.token,
      { name: "mcp-test", expires_in: 1 },
    );
    const auditorPage = await signedInPage(token.plain_token);
    await go(auditorPage, "/config/mcp-servers");
    await cell(auditorPage, "issues").waitFor();
    for (const name of ["New MCP server", "Edit issues", "Delete issues"]) {
      expect(await auditorPage.getByRole("button", { name }).count(), name).toBe(0);
    }
    await auditorPage.context().close();
  });

  it("grants the server in a policy with an exclude pattern, and lists the grant", async () => {
    staleTab = await signedInPage(owner.token);
    await go(staleTab, "/config/mcp-servers");
    await cell(staleTab, "issues").waitFor();

    await go(page, "/config/policies");
    await page.getByRole("button", { name: "New policy" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Eng tools");
    await page.getByRole("group", { name: "Source groups" }).getByLabel("All").check();
    // No provider and no MCP server: the policy would authorise nothing.
    await page.getByRole("button", { name: "Create policy" }).click();
    await page.getByText("pick at least one provider or MCP server").waitFor();
    await page.getByRole("group", { name: "MCP servers", exact: true }).getByLabel("issues").check();
    expect(await page.getByText("pick at least one provider or MCP server").count()).toBe(0);

    const tools = page.getByRole("group", { name: "Tools of issues" });
    await tools.getByLabel("Exclude tools").fill("delete_*, get issue");
    await page.getByRole("button", { name: "Create policy" }).click();
    await tools.getByText("get issue: must be letters, digits, _ . - / and the wildcard *").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await tools.getByLabel("Exclude tools").fill("delete_*\nadmin_*");
    await page.getByRole("button", { name: "Create policy" }).click();
    await cell(page, "Eng tools").waitFor();
    await cell(page, "issues (not delete_*, admin_*)").waitFor();

    const [server] = await servers();
    const [policy] = await policies();
    expect(policy).toMatchObject({
      destination_provider_ids: [],
      mcp_servers: [{ server_id: server?.id, include_tools: [], exclude_tools: ["delete_*", "admin_*"] }],
    });

    // Edited again, the form shows the grant's filters as stored, and a save keeps them.
    await page.getByRole("button", { name: "Edit Eng tools" }).click();
    expect(await tools.getByLabel("Exclude tools").inputValue()).toBe("delete_*, admin_*");
    await tools.getByLabel("Include tools").fill("get_*, search");
    await page.getByRole("button", { name: "Save policy" }).click();
    await cell(page, "issues (only get_*, search; not delete_*, admin_*)").waitFor();
  });

  it("shows the granted server on the Agent config page, with the lines that add /mcp to Claude Code and Codex", async () => {
    await stack.api("POST", "/api/agent-network/settings", owner.token, { proxy_address: "gw.example.com" });
    await go(page, "/agent");
    await page.getByRole("heading", { name: "MCP servers you can reach" }).waitFor();
    await cell(page, "issues").waitFor();
    await page.getByText("http://127.0.0.1:8090/mcp/issues", { exact: true }).waitFor();
    await page
      .getByText(/claude mcp add --transport http agentnet http:\/\/127\.0\.0\.1:8090\/mcp/)
      .waitFor();
    await page.getByText('bearer_token_env_var = "AGENTNET_TOKEN"', { exact: false }).waitFor();
    // The token shows masked until revealed.
    expect(await page.getByText(owner.token).count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
  });

  it("lets a member set their own credential on the Agent config page once the server takes one per member", async () => {
    const [server] = await servers();
    const switched = await stack.api<McpServer>(
      "PUT",
      `/api/agent-network/mcp-servers/${server?.id}`,
      owner.token,
      {
        name: "issues",
        url: URL_V2,
        credential: { kind: "per_user", header_name: "X-User-Token" },
      },
    );
    expect(switched.credential).toEqual({ kind: "per_user", header_name: "X-User-Token" });
    // The page is open from the test before: read again.
    await page.reload();
    const own = page.getByRole("form", { name: "Your credential for issues" });
    await own.getByText("not set: calls are refused").waitFor();
    await own.getByLabel("X-User-Token for issues").fill("my-own-token");
    await own.getByRole("button", { name: "Set" }).click();
    await own.getByText("set", { exact: true }).waitFor();
    expect(await own.getByLabel("X-User-Token for issues").inputValue()).toBe("");
    expect(await page.getByText("my-own-token").count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
  });

  it("refuses to delete the server while the policy grants it: named before, the API's 409 when stale", async () => {
    await go(page, "/config/mcp-servers");
    await page.getByRole("button", { name: "Delete issues" }).click();
    const inUse = page.getByRole("dialog", { name: "The MCP server “issues” is in use" });
    await inUse.getByText("policy “Eng tools”").waitFor();
    await inUse.getByRole("button", { name: "OK" }).click();
    await inUse.waitFor({ state: "hidden" });

    // The tab opened before the grant does not know of it: the delete is sent, and the API refuses it.
    await staleTab.getByRole("button", { name: "Delete issues" }).click();
    await staleTab
      .getByRole("dialog", { name: "Delete the MCP server “issues”?" })
      .getByRole("button", { name: "Delete MCP server" })
      .click();
    await staleTab
      .getByRole("alert")
      .getByText("The MCP server is used by policies: Eng tools; remove it from them first")
      .waitFor();
    await cell(staleTab, "issues").waitFor();
    expect((await servers()).map((s) => s.name)).toEqual(["issues"]);
    await staleTab.context().close();
  });

  it("deletes the policy, then the server", async () => {
    await go(page, "/config/policies");
    await page.getByRole("button", { name: "Delete Eng tools" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete policy" }).click();
    await cell(page, "Eng tools").waitFor({ state: "detached" });

    await go(page, "/config/mcp-servers");
    await page.getByRole("button", { name: "Delete issues" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete MCP server" }).click();
    await page.getByText("No MCP servers yet").waitFor();
    expect(await servers()).toEqual([]);
    expect(await policies()).toEqual([]);
  });

  it("passes axe on the page and its form in both color schemes, with nothing refused by the CSP", async () => {
    const found: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      await go(page, "/config/mcp-servers");
      await page.getByText("No MCP servers yet").waitFor();
      for (const violation of await axeViolations(page)) found.push(`${colorScheme} list: ${violation}`);
      await page.getByRole("button", { name: "New MCP server" }).click();
      await page.getByLabel("Credential kind").selectOption("header");
      for (const violation of await axeViolations(page)) found.push(`${colorScheme} form: ${violation}`);
      await page.getByRole("button", { name: "Cancel" }).click();
    }
    await page.emulateMedia({ colorScheme: "light" });
    expect(found).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
