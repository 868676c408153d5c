import type { AccessLogPage, Caller, GatewayRequestEvent } from "@agentnet/contracts";
import { makeEvent, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

let stack: TelemetryStack;
let owner: Caller;
let ownerToken: string;
let member: { caller: Caller; token: string };
let events: GatewayRequestEvent[];

const at = (minute: number) => new Date(Date.UTC(2025, 2, 10, 12, minute)).toISOString();
// Ids are unique per run: JetStream drops a re-publish of the same Nats-Msg-Id for two minutes.
const run = uniqueId("r");
const rid = (n: string) => `${run}-req-${n}`;
const ids = (page: AccessLogPage) => page.data.map((entry) => entry.id.replace(`${run}-`, ""));

beforeAll(async () => {
  stack = await startTelemetryStack();
  const account = await stack.newAccount();
  owner = account.owner;
  ownerToken = account.token;
  member = await stack.addMember(owner, "user", "Regular Rita");
  const a = account.accountId;
  const other = { user_id: "user_bob", user_email: "bob@corp.example", user_name: "Bob Builder" };
  events = [
    makeEvent({ id: rid("00"), account_id: a, timestamp: at(0), model: "gpt-4o", group_ids: ["grp_eng"] }),
    makeEvent({
      id: rid("01"),
      account_id: a,
      timestamp: at(1),
      model: "claude-sonnet",
      provider: "anthropic",
      resolved_provider_id: "prov_anthropic",
      host: "api.anthropic.com",
      path: "/v1/messages",
      ...other,
      group_ids: ["grp_sales"],
      total_tokens: 900,
      session_id: "sess-1",
    }),
    makeEvent({
      id: rid("02"),
      account_id: a,
      timestamp: at(2),
      decision: "deny",
      deny_reason: "llm_policy.token_cap_exceeded",
      status_code: 429,
      total_tokens: 0,
      ...other,
      group_ids: ["grp_sales", "grp_eng"],
    }),
    makeEvent({
      id: rid("03"),
      account_id: a,
      timestamp: at(3),
      user_id: member.caller.user_id,
      user_email: member.caller.email,
      user_name: "Regular Rita",
      model: "gpt-4o-mini",
      session_id: "sess-1",
      request_prompt: "hello there",
      response_completion: "general kenobi",
    }),
    makeEvent({
      id: rid("04"),
      account_id: a,
      timestamp: at(4),
      user_id: member.caller.user_id,
      user_email: member.caller.email,
      user_name: "Regular Rita",
      group_ids: ["grp_sales"],
      path: "/v1/embeddings",
    }),
  ];
  await stack.publish(events);
  await stack.settle();
});
afterAll(() => stack.stop());

describe("GET access-logs through telemetry", () => {
  it("orders by timestamp descending by default and pages 1-indexed", async () => {
    const first = await stack.accessLogs(owner, { page_size: "2" });
    expect(first).toMatchObject({ page: 1, page_size: 2, total_records: 5, total_pages: 3 });
    expect(ids(first)).toEqual(["req-04", "req-03"]);
    expect(ids(await stack.accessLogs(owner, { page_size: "2", page: "3" }))).toEqual(["req-00"]);
    expect(ids(await stack.accessLogs(owner, { page_size: "2", page: "4" }))).toEqual([]);
  });

  it("sorts by any entry field in either order", async () => {
    expect(ids(await stack.accessLogs(owner, { sort_by: "timestamp", sort_order: "asc" }))).toEqual([
      "req-00",
      "req-01",
      "req-02",
      "req-03",
      "req-04",
    ]);
    const byTokens = await stack.accessLogs(owner, { sort_by: "total_tokens", sort_order: "descending" });
    expect(ids(byTokens).slice(0, 1)).toEqual(["req-01"]);
    expect(ids(byTokens).at(-1)).toBe("req-02");
    const byModel = await stack.accessLogs(owner, { sort_by: "model", sort_order: "ascending" });
    expect(byModel.data[0]?.model).toBe("claude-sonnet");
  });

  it("applies every filter", async () => {
    const q = (query: Record<string, string | string[]>) => stack.accessLogs(owner, query).then(ids);
    expect(await q({ user_id: "user_bob" })).toEqual(["req-02", "req-01"]);
    expect(await q({ session_id: "sess-1" })).toEqual(["req-03", "req-01"]);
    expect(await q({ group_id: ["grp_eng", "grp_nope"] })).toEqual(["req-02", "req-00"]);
    expect(await q({ group_id: "grp_sales" })).toEqual(["req-04", "req-02", "req-01"]);
    expect(await q({ provider_id: ["prov_anthropic"] })).toEqual(["req-01"]);
    expect(await q({ model: ["gpt-4o-mini", "claude-sonnet"] })).toEqual(["req-03", "req-01"]);
    expect(await q({ decision: "deny" })).toEqual(["req-02"]);
    expect(await q({ path: "/v1/em" })).toEqual(["req-04"]);
    expect(await q({ start_date: at(1), end_date: at(3) })).toEqual(["req-03", "req-02", "req-01"]);
    expect(await q({ start_date: at(4) })).toEqual(["req-04"]);
    expect(await q({ end_date: at(0) })).toEqual(["req-00"]);
    expect(await q({ user_id: "user_bob", decision: "allow" })).toEqual(["req-01"]);
  });

  it("searches id, host, path, model, user email and name", async () => {
    const search = (text: string) => stack.accessLogs(owner, { search: text }).then(ids);
    expect(await search(rid("03").toUpperCase())).toEqual(["req-03"]);
    expect(await search("anthropic.com")).toEqual(["req-01"]);
    expect(await search("embeddings")).toEqual(["req-04"]);
    expect(await search("sonnet")).toEqual(["req-01"]);
    expect(await search("bob@corp")).toEqual(["req-02", "req-01"]);
    expect(await search("rita")).toEqual(["req-04", "req-03"]);
    expect(await search("no such thing")).toEqual([]);
    // Host and path are searched one by one: no match across the two, even with a NUL between.
    expect(await search("anthropic.com\u0000/v1")).toEqual([]);
  });

  it("shows the prompt and completion only when they were captured", async () => {
    const page = await stack.accessLogs(owner, { sort_order: "ascending" });
    expect(page.data[3]).toMatchObject({
      request_prompt: "hello there",
      response_completion: "general kenobi",
    });
    expect(page.data[0]).not.toHaveProperty("request_prompt");
    expect(page.data[0]).not.toHaveProperty("response_completion");
  });

  it("scopes a caller without the account-wide grant to their own requests, whatever they filter or search", async () => {
    const mine = ["req-04", "req-03"];
    const q = (query: Record<string, string | string[]>) => stack.accessLogs(member.caller, query);
    expect(ids(await q({}))).toEqual(mine);
    expect((await q({})).total_records).toBe(2);
    expect(ids(await q({ user_id: "user_bob" }))).toEqual(mine);
    expect(ids(await q({ group_id: "grp_eng" }))).toEqual(mine);
    expect(ids(await q({ search: "bob" }))).toEqual([]);
    expect(ids(await q({ search: rid("01") }))).toEqual([]);
    expect(ids(await q({ session_id: "sess-1" }))).toEqual(["req-03"]);
    const sessions = await stack.sessions(member.caller, { session_id: "sess-1" });
    expect(sessions.data.map((s) => [s.session_id, s.request_count, s.user_id])).toEqual([
      ["sess-1", 1, member.caller.user_id],
    ]);
    const usage = await stack.usage(member.caller, { user_id: "user_bob", group_id: "grp_eng" });
    expect(usage.map((b) => b.total_tokens)).toEqual([300]);
  });
});

describe("over HTTP through the api-gateway", () => {
  it("answers the spec's page and refuses page_size above 100 with 400", async () => {
    const ok = await stack.http<AccessLogPage>(
      "/api/agent-network/access-logs?page_size=2&group_id=grp_sales&group_id=grp_eng",
      ownerToken,
    );
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ page: 1, page_size: 2, total_records: 4, total_pages: 2 });
    expect(ids(ok.body)).toEqual(["req-04", "req-02"]);

    const tooBig = await stack.http<{ code: number }>(
      "/api/agent-network/access-logs?page_size=101",
      ownerToken,
    );
    expect(tooBig.status).toBe(400);
    expect((await stack.http("/api/agent-network/access-logs?sort_by=nope", ownerToken)).status).toBe(400);
    expect(
      (await stack.http("/api/agent-network/access-log-sessions?page_size=500", ownerToken)).status,
    ).toBe(400);
    expect((await stack.http("/api/agent-network/usage/overview?granularity=year", ownerToken)).status).toBe(
      400,
    );
  });

  it("scopes a regular user's HTTP reads to their own requests", async () => {
    const logs = await stack.http<AccessLogPage>(
      "/api/agent-network/access-logs?user_id=user_bob",
      member.token,
    );
    expect(logs.status).toBe(200);
    expect(ids(logs.body)).toEqual(["req-04", "req-03"]);
    const usage = await stack.http<{ total_tokens: number }[]>(
      "/api/agent-network/usage/overview",
      member.token,
    );
    expect(usage.body.map((b) => b.total_tokens)).toEqual([300]);
    const sessions = await stack.http<{ total_records: number }>(
      "/api/agent-network/access-log-sessions",
      member.token,
    );
    expect(sessions.body.total_records).toBe(2);
  });

  it("answers an empty page when the account has log collection disabled, while usage still counts", async () => {
    const account = await stack.newAccount();
    await stack.configure(account.owner, { enable_log_collection: false });
    await stack.publish([
      makeEvent({ account_id: account.accountId, logged: false, host: "", path: "", source_ip: "" }),
    ]);
    await stack.settle();
    const logs = await stack.http<AccessLogPage>("/api/agent-network/access-logs", account.token);
    expect(logs.status).toBe(200);
    expect(logs.body).toEqual({ data: [], page: 1, page_size: 50, total_records: 0, total_pages: 0 });
    const sessions = await stack.http<AccessLogPage>("/api/agent-network/access-log-sessions", account.token);
    expect(sessions.body.total_records).toBe(0);
    const usage = await stack.http<{ total_tokens: number }[]>(
      "/api/agent-network/usage/overview",
      account.token,
    );
    expect(usage.body.map((b) => b.total_tokens)).toEqual([150]);
  });
});
