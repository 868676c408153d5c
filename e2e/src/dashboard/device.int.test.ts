import type { AgentCredential, AgentTokens, DeviceAuthorization, User } from "@agentnet/contracts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, launchChromium, newPage, screenshot } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

let stack: DashboardStack;
let browser: Browser;
let owner: { token: string };
let member: { id: string; token: string };
/** What the browser refused under the gateway's Content-Security-Policy, on any page of the run. */
const cspViolations: string[] = [];

const heading = (p: Page, name: string) => p.getByRole("heading", { level: 1, name });
const codeInput = (p: Page) => p.getByRole("textbox", { name: "Code", exact: true });
const credentialRows = (p: Page) => p.getByRole("table", { name: "Your agent sign-ins" }).locator("tbody tr");

/** What `agentnet login` does first: a device code, with no token. */
async function startDevice(clientName: string): Promise<DeviceAuthorization> {
  const response = await fetch(`${stack.baseUrl}/api/auth/device/code`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: clientName }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as DeviceAuthorization;
}

/** What `agentnet login` does next: polls for the tokens at the interval it was given. */
async function pollTokens(device: DeviceAuthorization) {
  return stack.waitFor(
    async () => {
      const response = await fetch(`${stack.baseUrl}/api/auth/device/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ device_code: device.device_code }),
      });
      return { status: response.status, body: (await response.json()) as AgentTokens & { error?: string } };
    },
    (answer) => answer.status === 200 || answer.body.error !== "authorization_pending",
    "the device token",
    (device.interval + 2) * 1000,
  );
}

async function openPage(): Promise<Page> {
  const opened = await newPage(browser);
  opened.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return opened;
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack();
  const boot = await stack.bootstrap();
  owner = { token: boot.token };
  member = await stack.addMember(owner.token, "Dana Developer");
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("the device page against the real stack", { timeout: 60_000 }, () => {
  it("opens from the CLI's URL after sign-in, confirms the code, and the CLI gets its tokens", async () => {
    const device = await startDevice("dana-laptop");
    expect(device.verification_uri_complete).toBe(`${stack.baseUrl}/#/device?user_code=${device.user_code}`);
    const page = await openPage();
    await page.goto(device.verification_uri_complete);
    // Not signed in: the sign-in page first, then back to the device page with its code.
    await page.getByLabel("API token").fill(member.token);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await heading(page, "Confirm an agent sign-in").waitFor();
    expect(await codeInput(page).inputValue()).toBe(device.user_code);
    // Who asked, before anything is confirmed: a code someone else sent would show a stranger's.
    const asker = page.getByLabel("Who asked for this code");
    await asker.waitFor();
    expect(await asker.textContent()).toContain("dana-laptop");
    expect(await asker.textContent()).toContain("127.0.0.1");
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "28-device-confirm");

    await page.getByRole("button", { name: "Confirm" }).click();
    const confirmed = page.getByRole("status").filter({ hasText: "Confirmed" });
    await confirmed.waitFor();
    expect(await confirmed.textContent()).toContain("“dana-laptop”");
    // The spent code leaves the URL.
    expect(page.url()).toBe(`${stack.baseUrl}/#/device`);

    const tokens = await pollTokens(device);
    expect(tokens.status).toBe(200);
    expect(tokens.body.access_token).toMatch(/^agn_/);
    expect(tokens.body.refresh_token).toMatch(/^agr_/);
    const me = await stack.api<User[]>("GET", "/api/users", tokens.body.access_token);
    expect(me.map((user) => user.id)).toEqual([member.id]);

    // The page re-reads the list until the agent has collected its tokens.
    await expect.poll(() => credentialRows(page).count(), { timeout: 10_000 }).toBe(1);
    const row = credentialRows(page).first();
    expect(await row.locator("td").first().textContent()).toBe("dana-laptop");
    await screenshot(page, "29-device-signed-in");
    await page.close();
  });

  it("refuses a code, says which client it refused, and the CLI is denied", async () => {
    const device = await startDevice("unknown-box");
    const page = await openPage();
    await page.context().addInitScript((t) => sessionStorage.setItem("agentnet.token", t), member.token);
    // Typed as a person would, from the page the Agent config links to.
    await page.goto(`${stack.baseUrl}/#/agent`);
    await page.getByRole("heading", { name: "Short-lived tokens for your agents" }).waitFor();
    await page
      .getByRole("figure")
      .filter({ hasText: `agentnet login --api ${stack.baseUrl}` })
      .waitFor();
    await page.getByRole("figure").filter({ hasText: '"apiKeyHelper": "agentnet token"' }).waitFor();
    await page.getByRole("link", { name: "agent sign-in page" }).click();
    await heading(page, "Confirm an agent sign-in").waitFor();
    await codeInput(page).fill(device.user_code.replace("-", "").toLowerCase());
    await page.getByRole("button", { name: "Refuse" }).click();
    const refused = page.getByRole("status").filter({ hasText: "was refused and gets no token" });
    await refused.waitFor();
    expect(await refused.textContent()).toContain("“unknown-box”");
    expect((await pollTokens(device)).body.error).toBe("access_denied");

    // A code no agent waits for (spent) says so.
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByRole("alert").filter({ hasText: "No agent is waiting for the code" }).waitFor();
    await page.close();
  });

  it("lists only the member's own sign-ins, and Revoke ends one", async () => {
    const page = await openPage();
    await page.context().addInitScript((t) => sessionStorage.setItem("agentnet.token", t), member.token);
    await page.goto(`${stack.baseUrl}/#/device`);
    await credentialRows(page).first().waitFor();
    expect(await credentialRows(page).count()).toBe(1);
    const [credential] = await stack.api<AgentCredential[]>("GET", "/api/agent-credentials", member.token);
    expect(credential?.client_name).toBe("dana-laptop");
    await credentialRows(page)
      .first()
      .getByRole("button", { name: /^Revoke dana-laptop/ })
      .click();
    await page.getByText("No agent is signed in as you").waitFor();
    expect(await stack.api<AgentCredential[]>("GET", "/api/agent-credentials", member.token)).toEqual([]);
    // The owner has none of the member's.
    expect(await stack.api<AgentCredential[]>("GET", "/api/agent-credentials", owner.token)).toEqual([]);
    expect(cspViolations).toEqual([]);
    await page.close();
  });
});
