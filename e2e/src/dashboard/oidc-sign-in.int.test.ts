import type {
  AgentCredential,
  DeviceAuthorization,
  Group,
  IdentityProvider,
  User,
} from "@agentnet/contracts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestIdentityProvider, type TestIdentityProvider } from "../api-gateway/oidc-provider";
import { axeViolations, launchChromium, newPage, screenshot } from "./browser";
import { type DashboardStack, startDashboardStack } from "./stack";

let stack: DashboardStack;
let browser: Browser;
let idp: TestIdentityProvider;
let owner: { token: string };
let engGroup: Group;
const domain = `corp-${Date.now()}.example`;
/** What the browser refused under the gateway's Content-Security-Policy, on any page of the run. */
const cspViolations: string[] = [];

const heading = (p: Page, name: string) => p.getByRole("heading", { level: 1, name });

async function openPage(token?: string): Promise<Page> {
  const opened = await newPage(browser);
  if (token) await opened.context().addInitScript((t) => sessionStorage.setItem("agentnet.token", t), token);
  opened.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return opened;
}

/** The dashboard's sign-in by email, then the test provider's login and consent pages, as a person fills them. */
async function signInAtProvider(page: Page, email: string, login: string) {
  await page.getByLabel("Work email").fill(email);
  await page.getByRole("button", { name: "Continue to your identity provider" }).click();
  await page.waitForURL(`${idp.issuer}/**`);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any");
  await page.locator('button[type="submit"]').click();
  await page.getByRole("button", { name: "Continue" }).click();
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startDashboardStack();
  idp = await startTestIdentityProvider(`${stack.baseUrl}/api/auth/oidc/callback`);
  const boot = await stack.bootstrap();
  owner = { token: boot.token };
  engGroup = await stack.api<Group>("POST", "/api/groups", owner.token, { name: "eng" });
  await stack.api("PUT", "/api/identity-provider", owner.token, {
    issuer: idp.issuer,
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    allowed_email_domains: [domain],
    group_mapping: [{ claim_value: "eng", group_id: engGroup.id }],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await idp?.stop();
});

describe("sign-in with the identity provider in the dashboard", { timeout: 60_000 }, () => {
  it("shows the owner the provider the API set, its secret write-only, and saves an edit that keeps the secret", async () => {
    const ops = await stack.api<Group>("POST", "/api/groups", owner.token, { name: "ops" });
    const page = await openPage(owner.token);
    await page.goto(`${stack.baseUrl}/#/account`);
    const form = page.getByRole("form", { name: "Identity provider" });
    await form.getByLabel("Issuer").waitFor();
    expect(await form.getByLabel("Issuer").inputValue()).toBe(idp.issuer);
    expect(await form.getByLabel("Client ID").inputValue()).toBe(idp.clientId);
    const secret = form.getByLabel("Client secret");
    expect(await secret.inputValue()).toBe("");
    expect(await secret.getAttribute("placeholder")).toBe("set; leave empty to keep");
    expect(await form.getByLabel("Allowed email domains").inputValue()).toBe(domain);
    expect(await form.getByLabel("Group 1").inputValue()).toBe(engGroup.id);
    await page.getByText(`${stack.baseUrl}/api/auth/oidc/callback`).waitFor();

    // The stored secret stays with its client: another client ID needs it typed again.
    await form.getByLabel("Client ID").fill("another-client");
    await form.getByRole("button", { name: "Save identity provider" }).click();
    await form.getByText("A new issuer or client ID needs its client secret again.").waitFor();
    await form.getByLabel("Client ID").fill(idp.clientId);

    await form.getByRole("button", { name: "Add a mapping" }).click();
    await form.getByLabel("Claim value 2").fill("sre");
    await form.getByRole("button", { name: "Save identity provider" }).click();
    await form.getByText("Pick the group this value stands for.").waitFor();
    await form.getByLabel("Group 2").selectOption({ label: "ops" });
    await form.getByLabel("Default role").selectOption({ label: "Auditor" });
    await form.getByRole("button", { name: "Save identity provider" }).click();
    await expect
      .poll(
        async () =>
          (await stack.api<IdentityProvider>("GET", "/api/identity-provider", owner.token)).default_role,
      )
      .toBe("auditor");
    const stored = await stack.api<IdentityProvider>("GET", "/api/identity-provider", owner.token);
    expect(stored).toMatchObject({
      client_secret_set: true,
      group_mapping: [
        { claim_value: "eng", group_id: engGroup.id },
        { claim_value: "sre", group_id: ops.id },
      ],
    });
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "31-account-identity-provider");
    // Back to what the sign-in below expects; the secret, left empty again, is kept (the sign-in proves it).
    await form.getByLabel("Default role").selectOption({ label: "User" });
    await form.getByRole("button", { name: "Remove mapping 2" }).click();
    await form.getByRole("button", { name: "Save identity provider" }).click();
    await expect
      .poll(
        async () =>
          (await stack.api<IdentityProvider>("GET", "/api/identity-provider", owner.token)).group_mapping,
      )
      .toEqual([{ claim_value: "eng", group_id: engGroup.id }]);
    await page.close();
  });

  it("signs a person in through the provider, back to the device page they opened, confirms a code with the CSRF token, and signs out", async () => {
    idp.users.set("alice", { email: `alice@${domain}`, name: "Alice Example", groups: ["eng"] });
    const deviceResponse = await fetch(`${stack.baseUrl}/api/auth/device/code`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "alice-laptop" }),
    });
    const device = (await deviceResponse.json()) as DeviceAuthorization;

    const page = await openPage();
    await page.goto(device.verification_uri_complete);
    await page.getByRole("heading", { name: "Sign in with your company's identity provider" }).waitFor();
    await screenshot(page, "30-sign-in-identity-provider");
    await signInAtProvider(page, `alice@${domain}`, "alice");

    // Signed in by the cookie, on the page the sign-in started from, with its code.
    await heading(page, "Confirm an agent sign-in").waitFor({ timeout: 15_000 });
    expect(page.url()).toBe(device.verification_uri_complete);
    const whoami = page.getByRole("navigation", { name: "Main" }).locator(".whoami");
    await whoami.getByText("Alice Example").waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("agentnet.token"))).toBeNull();
    const users = await stack.api<User[]>("GET", "/api/users", owner.token);
    const alice = users.find((user) => user.email === `alice@${domain}`);
    expect(alice?.auto_groups).toEqual([engGroup.id]);

    // A change made with the cookie: the dashboard sends the session's CSRF token.
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByRole("status").filter({ hasText: "Confirmed" }).waitFor();
    const tokens = await fetch(`${stack.baseUrl}/api/auth/device/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ device_code: device.device_code }),
    });
    expect(tokens.status).toBe(200);
    const [credential] = await stack.api<AgentCredential[]>(
      "GET",
      "/api/agent-credentials",
      ((await tokens.json()) as { access_token: string }).access_token,
    );
    expect(credential).toMatchObject({ user_id: alice?.id, client_name: "alice-laptop" });

    // The agent config has no token of hers to show: the snippets say where one comes from.
    await page.goto(`${stack.baseUrl}/#/agent`);
    await heading(page, "Agent config").waitFor();

    await whoami.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API token").waitFor();
    // The sign-in page may show before the sign-out's answer (which clears the cookie) arrives.
    await expect
      .poll(async () => (await page.context().cookies()).some((cookie) => cookie.name === "agn_session"))
      .toBe(false);
    // Reloaded, the page stays signed out.
    await page.reload();
    await page.getByLabel("Work email").waitFor();
    await page.waitForTimeout(500);
    expect(await page.getByLabel("API token").isVisible()).toBe(true);
    expect(cspViolations).toEqual([]);
    await page.close();
  });

  it("shows why the provider's sign-in was refused", async () => {
    // Vouched for by the provider, but with an email of a domain the account does not allow.
    idp.users.set("mallory", { email: "mallory@elsewhere.example", name: "Mallory", groups: [] });
    const page = await openPage();
    await page.goto(`${stack.baseUrl}/`);
    await signInAtProvider(page, `mallory@${domain}`, "mallory");
    await page.waitForURL(/#\/sign-in\?sign_in_error=/);
    const error = page.locator(".field-error");
    await error.waitFor();
    expect(await error.textContent()).toMatch(/^The sign-in did not happen: .+/);
    // A token sign-in from there lands on the dashboard, not on the sign-in URL.
    await page.getByLabel("API token").fill(owner.token);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    expect(page.url()).toBe(`${stack.baseUrl}/#/`);
    await page.close();
  });

  it("lets an auditor read the provider but not change it (only the owner does), and the owner remove it", async () => {
    const auditor = await stack.api<{ id: string }>("POST", "/api/users", owner.token, {
      email: `audrey-${Date.now()}@example.com`,
      name: "Audrey Auditor",
      role: "auditor",
    });
    const token = await stack.api<{ plain_token: string }>(
      "POST",
      `/api/users/${auditor.id}/tokens`,
      owner.token,
      {
        name: "dashboard-test",
        expires_in: 1,
      },
    );
    const reader = await openPage(token.plain_token);
    await reader.goto(`${stack.baseUrl}/#/account`);
    const readForm = reader.getByRole("form", { name: "Identity provider" });
    await readForm.getByLabel("Issuer").waitFor();
    expect(await readForm.getByLabel("Issuer").inputValue()).toBe(idp.issuer);
    expect(await readForm.getByLabel("Issuer").isDisabled()).toBe(true);
    expect(await readForm.getByRole("button", { name: "Save identity provider" }).count()).toBe(0);
    expect(await reader.getByRole("button", { name: "Remove the identity provider…" }).count()).toBe(0);
    await reader.close();

    const page = await openPage(owner.token);
    await page.goto(`${stack.baseUrl}/#/account`);
    await page.getByRole("button", { name: "Remove the identity provider…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete identity provider" }).click();
    await page.getByText("No identity provider is set").waitFor();
    const gone = await fetch(`${stack.baseUrl}/api/identity-provider`, {
      headers: { authorization: `Token ${owner.token}` },
    });
    expect(gone.status).toBe(404);
    await page.close();
  });
});
