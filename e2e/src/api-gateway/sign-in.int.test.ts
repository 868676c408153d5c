import type {
  AgentTokens,
  AuditPage,
  DeviceAuthorization,
  Group,
  IdentityProvider,
  User,
} from "@agentnet/contracts";
import { eventually } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./harness";
import {
  CookieJar,
  signInThrough,
  startTestIdentityProvider,
  type TestIdentityProvider,
} from "./oidc-provider";

let api: ApiHarness;
let idp: TestIdentityProvider;
let apiHost: string;
beforeAll(async () => {
  // The provider is asked again about signed-in people every second (a deployment: 15 minutes).
  api = await startApiHarness({ identityRecheckMs: 1_000 });
  apiHost = new URL(api.baseUrl).host;
  idp = await startTestIdentityProvider(`${api.baseUrl}/api/auth/oidc/callback`);
});
afterAll(async () => {
  await api.stop();
  await idp.stop();
});

/** An account whose owner set the test provider up, for people of `domain`; the `eng` claim maps to a group. */
async function accountWithProvider(domain: string) {
  const owner = await api.bootstrap();
  const eng = await api.call<Group>("POST", "/api/groups", { token: owner.token, body: { name: "eng" } });
  const set = await api.call<IdentityProvider>("PUT", "/api/identity-provider", {
    token: owner.token,
    body: {
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      allowed_email_domains: [domain],
      group_mapping: [{ claim_value: "eng", group_id: eng.body.id }],
    },
  });
  expect(set.status).toBe(200);
  return { owner, engGroupId: eng.body.id, provider: set.body };
}

/** Signs `login` in through the dashboard's start URL (by email, or by account); the session cookie, if one was set. */
async function signIn(email: string, login: string, start: Record<string, string> = { email }) {
  const jar = new CookieJar();
  const result = await signInThrough(
    `${api.baseUrl}/api/auth/oidc/start?${new URLSearchParams(start)}`,
    jar,
    login,
  );
  return { jar, ...result, session: jar.get(apiHost, "agn_session") };
}

/** Why the gateway sent the browser back to the sign-in page (`#/sign-in?sign_in_error=...`). */
const signInError = (location: string) =>
  new URLSearchParams(new URL(location).hash.split("?")[1] ?? "").get("sign_in_error") ?? "";

const withCookie = (jar: CookieJar, headers: Record<string, string> = {}) => ({
  headers: { cookie: jar.header(new URL(api.baseUrl)), ...headers },
});

describe("sign-in with the account's identity provider", () => {
  it("makes the user on first sign-in with the mapped groups, and a session cookie that works with CSRF protection", async () => {
    const domain = `corp-${Date.now()}.example`;
    const { owner, engGroupId, provider } = await accountWithProvider(domain);
    expect(provider).toMatchObject({ client_secret_set: true, default_role: "user", groups_claim: "groups" });
    expect(JSON.stringify(provider)).not.toContain(idp.clientSecret);
    idp.users.set("alice", { email: `alice@${domain}`, name: "Alice", groups: ["eng", "unmapped"] });

    const alice = await signIn(`alice@${domain}`, "alice");
    expect(alice.location).toBe(`${api.baseUrl}/#/`);
    expect(alice.session).toMatch(/^agn_/);
    // To the provider and back: PKCE and state in the request, the code redeemed once.
    const toProvider = new URL(alice.visited.find((url) => url.startsWith(`${idp.issuer}/auth`)) ?? "");
    expect(toProvider.searchParams.get("code_challenge_method")).toBe("S256");
    expect(toProvider.searchParams.get("state")).toBeTruthy();
    expect(toProvider.searchParams.get("nonce")).toBeTruthy();

    const session = await api.call<{ email: string; role: string; csrf_token: string }>(
      "GET",
      "/api/auth/session",
      withCookie(alice.jar),
    );
    expect(session.body).toMatchObject({ email: `alice@${domain}`, role: "user" });
    const users = await api.call<User[]>("GET", "/api/users", { token: owner.token });
    const made = users.body.find((user) => user.email === `alice@${domain}`);
    expect(made?.auto_groups).toEqual([engGroupId]);

    // A change with the cookie alone, or from another origin, is refused; with the CSRF token it passes.
    const signOut = (headers: Record<string, string>) =>
      api.call("POST", "/api/auth/sign-out", withCookie(alice.jar, headers));
    expect((await signOut({})).status).toBe(403);
    expect(
      (await signOut({ "x-csrf-token": session.body.csrf_token, origin: "https://evil.example" })).status,
    ).toBe(403);
    expect((await signOut({ "x-csrf-token": session.body.csrf_token })).status).toBe(200);
    expect((await api.call("GET", "/api/auth/session", withCookie(alice.jar))).status).toBe(401);

    const trail = await api.call<AuditPage>("GET", "/api/audit?action=sessions", { token: owner.token });
    expect(trail.body.entries.map((entry) => [entry.action, entry.outcome])).toEqual([
      ["sessions.delete", "succeeded"],
      ["sessions.create", "succeeded"],
    ]);
  });

  it("keeps the user's groups in step with the claim, and a blocked user's session stops at once", async () => {
    const domain = `corp-${Date.now()}-b.example`;
    const { owner, engGroupId } = await accountWithProvider(domain);
    idp.users.set("bob", { email: `bob@${domain}`, name: "Bob", groups: ["eng"] });
    await signIn(`bob@${domain}`, "bob");
    const bobOf = async () =>
      (await api.call<User[]>("GET", "/api/users", { token: owner.token })).body.find(
        (user) => user.email === `bob@${domain}`,
      );
    expect((await bobOf())?.auto_groups).toEqual([engGroupId]);

    idp.users.set("bob", { email: `bob@${domain}`, name: "Bob", groups: [] });
    const again = await signIn(`bob@${domain}`, "bob");
    expect((await bobOf())?.auto_groups).toEqual([]);
    // What the sign-ins did to bob's user is in the trail, each change made by him.
    const userTrail = await api.call<AuditPage>(
      "GET",
      `/api/audit?action=users&target_id=${(await bobOf())?.id}`,
      {
        token: owner.token,
      },
    );
    expect(userTrail.body.entries.map((entry) => [entry.action, entry.actor.email])).toEqual([
      ["users.update", `bob@${domain}`],
      ["users.create", `bob@${domain}`],
    ]);
    expect(userTrail.body.entries[0]).toMatchObject({
      before: { auto_groups: [engGroupId] },
      after: { auto_groups: [] },
    });
    expect((await api.call("GET", "/api/auth/session", withCookie(again.jar))).status).toBe(200);

    const bob = await bobOf();
    await api.call("PUT", `/api/users/${bob?.id}`, {
      token: owner.token,
      body: { role: "user", auto_groups: [], is_blocked: true },
    });
    expect((await api.call("GET", "/api/auth/session", withCookie(again.jar))).status).toBe(401);
    const refused = await signIn(`bob@${domain}`, "bob");
    expect(refused.session).toBeUndefined();
    expect(signInError(refused.location)).toContain("this user is blocked");
  });

  it("refuses a replayed or forged callback, and people of another domain", async () => {
    const domain = `corp-${Date.now()}-c.example`;
    const { owner } = await accountWithProvider(domain);
    idp.users.set("carol", { email: `carol@${domain}`, name: "Carol", groups: [] });
    const carol = await signIn(`carol@${domain}`, "carol");
    const callback = carol.visited.find((url) => url.includes("/api/auth/oidc/callback")) ?? "";
    expect(callback).toContain("code=");

    // The same callback again, in a browser that started a sign-in (its state cookie set to match).
    const replay = new CookieJar();
    replay.set(apiHost, "agn_sign_in", new URL(callback).searchParams.get("state") ?? "");
    const replayed = await signInThrough(callback, replay, "carol");
    expect(signInError(replayed.location)).toContain("unknown, used or expired");
    expect(replay.get(apiHost, "agn_session")).toBeUndefined();

    // A callback this browser never started (no state cookie): refused before anything is redeemed.
    const forged = await signInThrough(callback, new CookieJar(), "carol");
    expect(signInError(forged.location)).toContain("not started in this browser");

    const elsewhere = `elsewhere-${Date.now()}.example`;
    idp.users.set("mallory", { email: `mallory@${elsewhere}`, name: "M", groups: [] });
    const start = await fetch(
      `${api.baseUrl}/api/auth/oidc/start?${new URLSearchParams({ email: `mallory@${elsewhere}` })}`,
      { redirect: "manual" },
    );
    expect(start.status).toBe(303);
    expect(signInError(new URL(start.headers.get("location") ?? "", api.baseUrl).href)).toContain(
      `identity provider for ${elsewhere} not found`,
    );
    // Through this account's provider by id, the email's domain is still checked.
    const [account] = (await api.call<{ id: string }[]>("GET", "/api/accounts", { token: owner.token })).body;
    const byAccount = await signInThrough(
      `${api.baseUrl}/api/auth/oidc/start?${new URLSearchParams({ account_id: account?.id ?? "" })}`,
      new CookieJar(),
      "mallory",
    );
    expect(signInError(byAccount.location)).toContain("may not sign in here");

    const trail = await api.call<AuditPage>("GET", "/api/audit?action=sessions.create", {
      token: owner.token,
    });
    expect(trail.body.entries.map((entry) => [entry.outcome, entry.error_code])).toEqual([
      ["refused", "sign_in.domain_not_allowed"],
      ["succeeded", undefined],
    ]);

    // The owner narrows the domains: carol's next sign-in is refused, and ends her session with it.
    expect((await api.call("GET", "/api/auth/session", withCookie(carol.jar))).status).toBe(200);
    await api.call("PUT", "/api/identity-provider", {
      token: owner.token,
      body: { issuer: idp.issuer, client_id: idp.clientId, allowed_email_domains: [elsewhere] },
    });
    const narrowed = await signIn(`carol@${domain}`, "carol", { account_id: account?.id ?? "" });
    expect(signInError(narrowed.location)).toContain("may not sign in here");
    expect((await api.call("GET", "/api/auth/session", withCookie(carol.jar))).status).toBe(401);
  });

  it("lets only the owner name the provider, never sends the secret to another one, and takes only a verified email of the same person", async () => {
    const domain = `corp-${Date.now()}-d.example`;
    const { owner } = await accountWithProvider(domain);
    const admin = await api.addMember(owner.token, "admin");
    const settings = { issuer: idp.issuer, client_id: idp.clientId, allowed_email_domains: [domain] };
    expect(
      (await api.call("PUT", "/api/identity-provider", { token: admin.token, body: settings })).status,
    ).toBe(403);
    expect((await api.call("GET", "/api/identity-provider", { token: admin.token })).status).toBe(200);
    // Another account may not claim the domain: sign-in by email would not know where to go.
    const other = await api.bootstrap();
    expect(
      await api.call("PUT", "/api/identity-provider", {
        token: other.token,
        body: { ...settings, client_secret: idp.clientSecret },
      }),
    ).toMatchObject({ status: 409, body: { reason: "identity_provider.domain_taken" } });
    const moved = await api.call("PUT", "/api/identity-provider", {
      token: owner.token,
      body: { ...settings, issuer: "https://login.elsewhere.example" },
    });
    expect(moved.status).toBe(400);
    expect(
      (await api.call("PUT", "/api/identity-provider", { token: owner.token, body: settings })).status,
    ).toBe(200);

    idp.users.set("dave", { email: `dave@${domain}`, name: "Dave", groups: [], emailVerified: false });
    expect(signInError((await signIn(`dave@${domain}`, "dave")).location)).toContain("no verified email");

    idp.users.set("erin", { email: `erin@${domain}`, name: "Erin", groups: [] });
    const erin = await signIn(`erin@${domain}`, "erin");
    expect(erin.session).toBeDefined();
    // Another person at the provider who now has erin's email is not erin, and erin's session ends.
    idp.users.set("erin-2", { email: `erin@${domain}`, name: "Not Erin", groups: [] });
    expect(signInError((await signIn(`erin@${domain}`, "erin-2")).location)).toContain("another person");
    expect((await api.call("GET", "/api/auth/session", withCookie(erin.jar))).status).toBe(401);
  });

  it("asks the provider again with the sign-in's refresh token: a person removed there loses their session and agent credential at once", async () => {
    const domain = `corp-${Date.now()}-e.example`;
    const { owner } = await accountWithProvider(domain);
    idp.users.set("gina", { email: `gina@${domain}`, name: "Gina", groups: [] });
    idp.users.set("hal", { email: `hal@${domain}`, name: "Hal", groups: [] });
    const gina = await signIn(`gina@${domain}`, "gina");
    const hal = await signIn(`hal@${domain}`, "hal");

    // Gina's agent credential, confirmed with her browser session.
    const { csrf_token } = (
      await api.call<{ csrf_token: string }>("GET", "/api/auth/session", withCookie(gina.jar))
    ).body;
    const device = (
      await api.call<DeviceAuthorization>("POST", "/api/auth/device/code", {
        body: { client_name: "laptop" },
      })
    ).body;
    const confirmed = await api.call("POST", "/api/agent-credentials/device", {
      ...withCookie(gina.jar, { "x-csrf-token": csrf_token }),
      body: { user_code: device.user_code },
    });
    expect(confirmed.status).toBe(200);
    const tokens = await api.call<AgentTokens>("POST", "/api/auth/device/token", {
      body: { device_code: device.device_code },
    });
    expect(tokens.status).toBe(200);

    // Asked again while she is still there, the provider vouches: nothing ends.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await api.call("GET", "/api/auth/session", withCookie(gina.jar))).status).toBe(200);

    idp.users.delete("gina");
    await eventually(
      async () => (await api.call("GET", "/api/auth/session", withCookie(gina.jar))).status === 401,
      15_000,
    );
    const renewed = await api.call<{ error: string }>("POST", "/api/auth/token", {
      body: { refresh_token: tokens.body.refresh_token },
    });
    expect(renewed).toMatchObject({ status: 401, body: { error: "invalid_grant" } });
    expect((await api.call("GET", "/api/users", { token: tokens.body.access_token })).status).toBe(401);
    expect((await api.call("GET", "/api/auth/session", withCookie(hal.jar))).status).toBe(200);

    // The entry is settled once the access has ended, so it may trail the 401 by a moment.
    const trail = () =>
      api.call<AuditPage>("GET", "/api/audit?action=sessions.ended_by_provider", { token: owner.token });
    await expect
      .poll(async () => (await trail()).body.entries)
      .toMatchObject([
        { actor: { email: `gina@${domain}` }, target: { type: "user" }, outcome: "succeeded" },
      ]);

    // The owner turns sign-in with the provider off: what it vouched for ends too.
    expect((await api.call("DELETE", "/api/identity-provider", { token: owner.token })).status).toBe(200);
    await eventually(
      async () => (await api.call("GET", "/api/auth/session", withCookie(hal.jar))).status === 401,
      15_000,
    );
  }, 60_000);
});
