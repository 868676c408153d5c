import type { AccessLogEntryView, AccessLogPage, AccessLogSessionPage, Caller } from "@agentnet/contracts";
import { makeEvent, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

/** nats-server's default max_payload, which the test bus runs with. */
const MAX_PAYLOAD = 1024 * 1024;
/** What the proxy captures at most of a prompt (apps/gateway-proxy/src/domain/capture.ts). */
const CAPTURED_CHARS = 32_768;

let stack: TelemetryStack;
let owner: { caller: Caller; token: string };
let member: { caller: Caller; token: string };
let colleague: { caller: Caller; token: string };
const prompts = new Map<string, string>();
let sessionId: string;

/** A prompt of exactly CAPTURED_CHARS characters that differs from every other one, escapes and all. */
const promptOf = (n: number) => {
  const head = `[{"role":"user","content":"request ${n}: résumé ✓ \\n`;
  return `${head}${"lorem ipsum ".repeat(CAPTURED_CHARS / 12)}`.slice(0, CAPTURED_CHARS);
};

beforeAll(async () => {
  stack = await startTelemetryStack();
  const account = await stack.newAccount();
  owner = { caller: account.owner, token: account.token };
  member = await stack.addMember(account.owner, "user", "Prompt Pat");
  colleague = await stack.addMember(account.owner, "user", "Other Olga");
  sessionId = uniqueId("coding-session");
  // 40 captured requests of one member: half in one coding session, half singletons.
  const events = Array.from({ length: 40 }, (_, i) => {
    const event = makeEvent({
      account_id: account.accountId,
      user_id: member.caller.user_id,
      user_email: member.caller.email,
      user_name: member.caller.name,
      timestamp: new Date(Date.now() - (40 - i) * 1_000).toISOString(),
      session_id: i % 2 === 0 ? sessionId : "",
      request_prompt: promptOf(i),
      response_completion: `answer ${i}: ${"done ".repeat(400)}`,
    });
    prompts.set(event.id, event.request_prompt ?? "");
    return event;
  });
  await stack.publish(events);
  await stack.settle();
});
afterAll(() => stack.stop());

/** An HTTP read and the size of its body (express writes the reply as compact JSON). */
const read = async <T>(path: string, token: string) => {
  const { status, body } = await stack.http<T>(path, token);
  return { status, body, bytes: Buffer.byteLength(JSON.stringify(body)) };
};

/** Each text is a preview of what was captured, flagged as one. */
const expectPreviews = (entries: AccessLogEntryView[]) => {
  for (const entry of entries) {
    const whole = prompts.get(entry.id) ?? "";
    expect(whole.startsWith(entry.request_prompt ?? "-")).toBe(true);
    expect(entry.request_prompt?.length).toBeLessThan(CAPTURED_CHARS);
    expect(entry.request_prompt_truncated).toBe(true);
  }
};

describe("a page of entries with captured prompts", () => {
  it("answers 100 per page with every entry, each prompt a flagged preview, under max_payload", async () => {
    for (const reader of [owner, member]) {
      const page = await read<AccessLogPage>("/api/agent-network/access-logs?page_size=100", reader.token);
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ page: 1, page_size: 100, total_records: 40, total_pages: 1 });
      expect(new Set(page.body.data.map((entry) => entry.id))).toEqual(new Set(prompts.keys()));
      expect(page.bytes).toBeLessThan(MAX_PAYLOAD);
      expectPreviews(page.body.data);
      // A completion that fits its share stays whole, unflagged.
      expect(page.body.data[0]?.response_completion).toMatch(/^answer \d+: (done ){400}$/);
      expect(page.body.data[0]).not.toHaveProperty("response_completion_truncated");
    }
  });

  it("answers a page of sessions and one session's page with their entries as previews", async () => {
    const sessions = await read<AccessLogSessionPage>(
      "/api/agent-network/access-log-sessions?page_size=100",
      member.token,
    );
    expect(sessions.status).toBe(200);
    expect(sessions.body.total_records).toBe(21);
    expect(sessions.bytes).toBeLessThan(MAX_PAYLOAD);
    const entries = sessions.body.data.flatMap((session) => session.entries);
    expect(entries.length).toBeGreaterThanOrEqual(21);
    expectPreviews(entries);
    const coding = sessions.body.data.find((session) => session.session_id === sessionId);
    expect(coding?.request_count).toBe(20);

    const one = await read<AccessLogSessionPage>(
      `/api/agent-network/access-log-sessions?session_id=${sessionId}&page_size=1`,
      member.token,
    );
    expect(one.status).toBe(200);
    const [session] = one.body.data;
    expect(session?.entries).toHaveLength(20);
    expectPreviews(session?.entries ?? []);
  });

  it("keeps telemetry answering in the same process afterwards", async () => {
    const page = await stack.accessLogs(member.caller, { page_size: "100" });
    expect(page.data).toHaveLength(40);
    expect((await stack.usage(member.caller)).length).toBeGreaterThan(0);
  });
});

describe("an entry whose model name alone outgrows its share", () => {
  it("leaves its pages readable: the name cut and marked in lists, whole by id", async () => {
    const { accountId, token } = await stack.newAccount();
    // About as long as the proxy lets a model name be: it cuts an event only to what NATS carries.
    const model = `m-${"x".repeat(900_000)}`;
    const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1_000).toISOString();
    // The newest of 50, so its share is a fiftieth of the answer.
    const odd = makeEvent({ account_id: accountId, model, session_id: "odd", timestamp: at(0) });
    const plain = Array.from({ length: 49 }, (_, i) =>
      makeEvent({ account_id: accountId, session_id: "odd", timestamp: at(i + 1) }),
    );
    await stack.publish([odd, ...plain]);
    await stack.settle();

    const page = await read<AccessLogPage>("/api/agent-network/access-logs?page_size=100", token);
    expect(page.status).toBe(200);
    expect(page.body.data.map((entry) => entry.id)).toEqual([odd, ...plain].map((event) => event.id));
    const listed = page.body.data[0];
    expect(listed?.model.endsWith("…[truncated]")).toBe(true);
    expect(model.startsWith(listed?.model.slice(0, -"…[truncated]".length) ?? "-")).toBe(true);
    const sessions = await read<AccessLogSessionPage>("/api/agent-network/access-log-sessions", token);
    expect(sessions.status).toBe(200);
    expect(sessions.body.data[0]?.request_count).toBe(50);
    const whole = await read<AccessLogEntryView>(`/api/agent-network/access-logs/${odd.id}`, token);
    expect(whole.body.model).toBe(model);
  });
});

describe("GET /access-logs/{logId}", () => {
  const entryPath = (id: string) => `/api/agent-network/access-logs/${encodeURIComponent(id)}`;
  const anyId = () => [...prompts.keys()][7] ?? "";

  it("answers the entry with its prompt whole to its own member and to the account-wide roles", async () => {
    for (const reader of [member, owner]) {
      const entry = await read<AccessLogEntryView>(entryPath(anyId()), reader.token);
      expect(entry.status).toBe(200);
      expect(entry.body.id).toBe(anyId());
      expect(entry.body.request_prompt).toBe(prompts.get(anyId()));
      expect(entry.body.request_prompt).toHaveLength(CAPTURED_CHARS);
      expect(entry.body).not.toHaveProperty("request_prompt_truncated");
    }
  });

  it("is 404 for another member's entry, another account's, and an id that never was", async () => {
    const notYours = await read<{ message: string; code: number }>(entryPath(anyId()), colleague.token);
    expect(notYours).toMatchObject({
      status: 404,
      body: { code: 404, message: "access log entry not found" },
    });
    const elsewhere = await stack.newAccount();
    expect((await read(entryPath(anyId()), elsewhere.token)).status).toBe(404);
    expect((await read(entryPath("no-such-request"), owner.token)).status).toBe(404);
  });
});
