import { startTestApi } from "@agentnet/api-gateway/testing";
import type { NatsConnection } from "@agentnet/bus";
import { ControlPlane, type PersonalAccessTokenGenerated, type User } from "@agentnet/contracts";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxyProcess } from "../proxy-process";
import { type Account, configure } from "../setup";
import { callApi, type Stack, startStack } from "../stack";

/** Far longer than any test: a token still refused right after a change was refused by a revocation. */
const CACHE_MS = 60_000;

let stack: Stack;
let proxyProcess: Awaited<ReturnType<typeof startProxyProcess>>;
const apis: Awaited<ReturnType<typeof startTestApi>>[] = [];
const apiBuses: NatsConnection[] = [];
/** Every proxy and api-gateway caching callers, each on a NATS connection of its own. */
let proxyUrls: string[];
let apiUrls: string[];

beforeAll(async () => {
  stack = await startStack({ proxy: { authCacheMs: CACHE_MS } });
  proxyProcess = await startProxyProcess(stack.vendorUpstreams, { AGN_AUTH_CACHE_MS: String(CACHE_MS) });
  const logger = createLogger("revocation-test", "silent");
  for (let replica = 0; replica < 2; replica++) {
    const nc = await connectTestBus("api-gateway");
    apiBuses.push(nc);
    apis.push(await startTestApi({ nc, logger, authCacheTtlMs: CACHE_MS }));
  }
  proxyUrls = [stack.proxy.url, proxyProcess.url];
  apiUrls = apis.map((api) => api.url);
}, 60_000);
afterAll(async () => {
  await proxyProcess?.stop();
  for (const api of apis) await api.stop();
  for (const nc of apiBuses) await nc.drain();
  await stack?.stop();
});

/** A change made through the first cached api-gateway, as an admin would make it. */
const admin = <T = unknown>(method: string, path: string, token: string, body?: unknown) =>
  callApi<T>(apiUrls[0] ?? "", method, path, token, body);

/** What each cache answers the token: the proxies' `/v1/models`, and `GET /api/users` on every api-gateway. */
const statusesFor = (token: string) =>
  Promise.all([
    ...proxyUrls.map(async (url) => {
      const response = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      return response.status;
    }),
    ...apiUrls.map(async (url) => (await callApi(url, "GET", "/users", token)).status),
  ]);

/** A member of the account with a token of their own, through the API. */
async function newMember(account: Account, body: Record<string, unknown> = {}) {
  const user = await account.must(
    admin<User>("POST", "/users", account.token, { email: `${uniqueId("member")}@example.com`, ...body }),
  );
  const generated = await account.must(
    admin<PersonalAccessTokenGenerated>("POST", `/users/${user.id}/tokens`, account.token, {
      name: "laptop",
      expires_in: 30,
    }),
  );
  return { user, token: generated.plain_token, tokenId: generated.personal_access_token.id };
}

/** Counts token lookups the control-plane is asked for (the test's operator connection sees them all). */
function countLookups(nc: NatsConnection) {
  let count = 0;
  const subscription = nc.subscribe(ControlPlane.authResolve.subject, {
    callback: () => {
      count++;
    },
  });
  return { count: () => count, stop: () => subscription.unsubscribe() };
}

describe("a revocation takes effect on every proxy and api-gateway before the API answers", () => {
  it("blocking a user: their token, cached everywhere a moment ago, is 401 on the very next request", async () => {
    const account = await stack.newAccount();
    const member = await newMember(account);
    const other = await newMember(account);
    expect(await statusesFor(member.token)).toEqual([200, 200, 200, 200]);
    expect(await statusesFor(other.token)).toEqual([200, 200, 200, 200]);
    const lookups = countLookups(stack.nc);
    await stack.nc.flush();
    expect(await statusesFor(member.token)).toEqual([200, 200, 200, 200]);
    // Served from the caches: without the revocation this token would keep working for a minute.
    expect(lookups.count()).toBe(0);
    lookups.stop();

    const blocked = await admin("PUT", `/users/${member.user.id}`, account.token, {
      role: "user",
      auto_groups: [],
      is_blocked: true,
    });
    expect(blocked.status).toBe(200);
    expect(await statusesFor(member.token)).toEqual([401, 401, 401, 401]);
    expect(await statusesFor(other.token)).toEqual([200, 200, 200, 200]);
  });

  it("deleting a token: that token is 401 at once, the user's other token keeps working", async () => {
    const account = await stack.newAccount();
    const member = await newMember(account);
    const second = await account.must(
      admin<PersonalAccessTokenGenerated>("POST", `/users/${member.user.id}/tokens`, account.token, {
        name: "ci",
        expires_in: 30,
      }),
    );
    expect(await statusesFor(member.token)).toEqual([200, 200, 200, 200]);
    expect(await statusesFor(second.plain_token)).toEqual([200, 200, 200, 200]);

    const deleted = await admin("DELETE", `/users/${member.user.id}/tokens/${member.tokenId}`, account.token);
    expect(deleted.status).toBe(200);
    expect(await statusesFor(member.token)).toEqual([401, 401, 401, 401]);
    expect(await statusesFor(second.plain_token)).toEqual([200, 200, 200, 200]);
  });

  it("deleting a user: their token is 401 at once", async () => {
    const account = await stack.newAccount();
    const member = await newMember(account);
    expect(await statusesFor(member.token)).toEqual([200, 200, 200, 200]);

    expect((await admin("DELETE", `/users/${member.user.id}`, account.token)).status).toBe(200);
    expect(await statusesFor(member.token)).toEqual([401, 401, 401, 401]);
  });

  it("deleting an account: its members' tokens are 401 at once, another account's are not", async () => {
    const account = await stack.newAccount();
    const member = await newMember(account);
    const neighbour = await stack.newAccount();
    expect(await statusesFor(member.token)).toEqual([200, 200, 200, 200]);
    expect(await statusesFor(neighbour.token)).toEqual([200, 200, 200, 200]);

    expect((await admin("DELETE", `/accounts/${account.owner.account_id}`, account.token)).status).toBe(200);
    expect(await statusesFor(member.token)).toEqual([401, 401, 401, 401]);
    expect(await statusesFor(account.token)).toEqual([401, 401, 401, 401]);
    expect(await statusesFor(neighbour.token)).toEqual([200, 200, 200, 200]);
  });

  it("demoting an admin: the next account-wide read on any api-gateway is 403", async () => {
    const account = await stack.newAccount();
    const member = await newMember(account, { role: "admin" });
    for (const url of apiUrls) expect((await callApi(url, "GET", "/groups", member.token)).status).toBe(200);

    const demoted = await admin("PUT", `/users/${member.user.id}`, account.token, {
      role: "user",
      auto_groups: [],
    });
    expect(demoted.status).toBe(200);
    const reads = await Promise.all(apiUrls.map((url) => callApi(url, "GET", "/groups", member.token)));
    expect(reads.map((read) => read.status)).toEqual([403, 403]);
  });

  it("leaving the group a policy admits: the next request on any proxy is denied", async () => {
    const account = await stack.newAccount();
    const group = await account.must(
      admin<{ id: string }>("POST", "/groups", account.token, { name: "eng" }),
    );
    await configure(stack, account).policy([account.openaiProvider.id], { source_groups: [group.id] });
    const member = await newMember(account, { auto_groups: [group.id] });
    const chat = () =>
      Promise.all(
        proxyUrls.map(async (url) => {
          const response = await fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${member.token}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }),
          });
          await response.arrayBuffer();
          return [response.status, response.headers.get("x-agentnet-reason")];
        }),
      );
    expect(await chat()).toEqual([
      [200, null],
      [200, null],
    ]);

    const moved = await admin("PUT", `/users/${member.user.id}`, account.token, {
      role: "user",
      auto_groups: [],
    });
    expect(moved.status).toBe(200);
    expect(await chat()).toEqual([
      [403, "llm_policy.no_matching_policy"],
      [403, "llm_policy.no_matching_policy"],
    ]);
  });
});
