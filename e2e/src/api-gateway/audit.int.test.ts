import type {
  AuditEntry,
  AuditPage,
  AuditVerification,
  Group,
  NotificationSettingsWithSecret,
} from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "./harness";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApiHarness();
});
afterAll(async () => {
  await api.stop();
});

/** The account's whole trail, oldest first. */
async function trail(token: string, filters = ""): Promise<AuditEntry[]> {
  const page = await api.call<AuditPage>("GET", `/api/audit?limit=1000${filters}`, { token });
  expect(page.status).toBe(200);
  return [...page.body.entries].reverse();
}

const verify = async (token: string) =>
  (await api.call<AuditVerification>("GET", "/api/audit/verify", { token })).body;

describe("the audit trail", () => {
  it("holds one entry per change with the target before and after, who made it and from where, secrets never", async () => {
    const owner = await api.bootstrap();
    const headers = { "user-agent": "audit-test/1.0" };
    const group = await api.call<Group>("POST", "/api/groups", {
      token: owner.token,
      body: { name: "eng" },
      headers,
    });
    await api.call("PUT", `/api/groups/${group.body.id}`, { token: owner.token, body: { name: "platform" } });
    const hook = await api.call<NotificationSettingsWithSecret>("POST", "/api/agent-network/notifications", {
      token: owner.token,
      body: { url: "https://hooks.example.com/a" },
    });
    await api.call("POST", "/api/agent-network/notifications/secret", { token: owner.token });
    await api.call("DELETE", `/api/groups/${group.body.id}`, { token: owner.token });

    const entries = await trail(owner.token);
    expect(entries.map((entry) => [entry.seq, entry.action, entry.target.type, entry.outcome])).toEqual([
      [1, "accounts.bootstrap", "account", "succeeded"],
      [2, "groups.create", "group", "succeeded"],
      [3, "groups.update", "group", "succeeded"],
      [4, "notifications.create", "notification_settings", "succeeded"],
      [5, "notifications.rotate_secret", "notification_settings", "succeeded"],
      [6, "groups.delete", "group", "succeeded"],
    ]);
    const [, created, renamed, hooked, rotated, deleted] = entries;
    expect(created).toMatchObject({
      target: { type: "group", id: group.body.id },
      actor: { user_id: owner.user_id, role: "owner", user_agent: "audit-test/1.0" },
      after: { id: group.body.id, name: "eng" },
    });
    expect(created?.actor.token_id).toEqual(expect.any(String));
    expect(created?.actor.address).toMatch(/127\.0\.0\.1/);
    expect(created).not.toHaveProperty("before");
    expect(renamed).toMatchObject({ before: { name: "eng" }, after: { name: "platform" } });
    expect(deleted).toMatchObject({ before: { name: "platform" } });
    expect(deleted).not.toHaveProperty("after");
    // The signing secret is sealed: set on create, changed by a rotation, its value nowhere.
    expect(JSON.stringify(hooked?.after)).toContain('"(secret, set)"');
    expect(JSON.stringify(rotated?.after)).toContain('"(secret, changed)"');
    expect(JSON.stringify(entries)).not.toContain(hook.body.signing_secret);

    expect(await verify(owner.token)).toEqual({ intact: true, checked: 6, first_seq: 1, last_seq: 6 });
    // One entry by its place in the chain; a place it does not have is 404.
    expect(await api.call("GET", "/api/audit/3", { token: owner.token })).toMatchObject({
      status: 200,
      body: renamed,
    });
    expect((await api.call("GET", "/api/audit/7", { token: owner.token })).status).toBe(404);
    expect((await api.call("GET", "/api/audit/0", { token: owner.token })).status).toBe(400);
  });

  it("records a change the caller may not make, or that fails, and lets only owner, admin and auditor read it", async () => {
    const owner = await api.bootstrap();
    const member = await api.addMember(owner.token, "user");
    const auditor = await api.addMember(owner.token, "auditor");

    expect((await api.call("POST", "/api/groups", { token: member.token, body: { name: "x" } })).status).toBe(
      403,
    );
    expect((await api.call("POST", "/api/groups", { token: owner.token, body: { name: "" } })).status).toBe(
      400,
    );
    expect((await api.call("DELETE", "/api/groups/nope", { token: owner.token })).status).toBe(404);
    const [account] = (await api.call<{ id: string }[]>("GET", "/api/accounts", { token: owner.token })).body;
    expect((await api.call("DELETE", `/api/accounts/${account?.id}`, { token: member.token })).status).toBe(
      403,
    );

    expect((await api.call("GET", "/api/audit", { token: member.token })).status).toBe(403);
    expect((await api.call("GET", "/api/audit/verify", { token: member.token })).status).toBe(403);
    expect((await api.call("GET", "/api/audit/1", { token: member.token })).status).toBe(403);
    expect((await api.call("GET", "/api/audit/export?format=jsonl", { token: member.token })).status).toBe(
      403,
    );

    const entries = await trail(auditor.token, "&action=groups");
    expect(entries.map((entry) => [entry.action, entry.outcome, entry.status, entry.error_code])).toEqual([
      ["groups.create", "refused", 403, "forbidden"],
      ["groups.create", "failed", 400, "bad_request"],
      ["groups.delete", "failed", 404, "not_found"],
    ]);
    expect(entries[0]?.actor).toMatchObject({
      user_id: member.user.id,
      role: "user",
      token_id: member.tokenId,
    });
    expect(entries[2]?.target).toEqual({ type: "group", id: "nope" });
    // A refused account deletion stays on the trail (one made takes the trail with the account).
    expect(await trail(auditor.token, "&action=accounts.delete")).toMatchObject([
      { outcome: "refused", status: 403, target: { type: "account", id: account?.id } },
    ]);

    const byMember = await trail(owner.token, `&actor=${encodeURIComponent(member.user.email)}`);
    expect(byMember.map((entry) => [entry.action, entry.outcome])).toEqual([
      ["groups.create", "refused"],
      ["accounts.delete", "refused"],
    ]);
    expect((await verify(auditor.token)).intact).toBe(true);
  });

  it("names the first broken link when an entry is edited or removed in the store", async () => {
    const owner = await api.bootstrap();
    for (const name of ["a", "b", "c", "d"]) {
      await api.call("POST", "/api/groups", { token: owner.token, body: { name } });
    }
    const entries = await trail(owner.token);
    const third = entries[2];
    const collection = api.connection.collection("audit_entries");

    await collection.updateOne(
      { _id: third?.id as never },
      { $set: { after_json: JSON.stringify({ name: "not-what-happened" }) } },
    );
    expect(await verify(owner.token)).toMatchObject({
      intact: false,
      checked: 2,
      broken: { seq: 3, id: third?.id, reason: "hash_mismatch" },
    });

    await collection.deleteOne({ _id: third?.id as never });
    expect(await verify(owner.token)).toMatchObject({
      intact: false,
      checked: 2,
      broken: { seq: 4, reason: "seq_gap" },
    });
  });

  it("keeps one chain without gaps when changes race", async () => {
    const owner = await api.bootstrap();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        api.call("POST", "/api/groups", { token: owner.token, body: { name: `g${index}` } }),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const entries = await trail(owner.token);
    expect(entries.map((entry) => entry.seq)).toEqual(Array.from({ length: 13 }, (_, index) => index + 1));
    expect(new Set(entries.map((entry) => entry.target.id)).size).toBe(13);
    expect(await verify(owner.token)).toMatchObject({ intact: true, checked: 13 });
  });

  it("pages newest first and exports the filtered trail as JSON lines and CSV", async () => {
    const owner = await api.bootstrap();
    for (const name of ["a", "b,c", 'quote"d']) {
      await api.call("POST", "/api/groups", {
        token: owner.token,
        body: { name },
        headers: { "user-agent": "=HYPERLINK(1)" },
      });
    }
    const first = await api.call<AuditPage>("GET", "/api/audit?limit=2", { token: owner.token });
    expect(first.body.entries.map((entry) => entry.seq)).toEqual([4, 3]);
    const second = await api.call<AuditPage>(
      `GET`,
      `/api/audit?limit=2&before_seq=${first.body.next_before_seq}`,
      {
        token: owner.token,
      },
    );
    expect(second.body.entries.map((entry) => entry.seq)).toEqual([2, 1]);
    expect(second.body).not.toHaveProperty("next_before_seq");

    const exported = async (query: string) => {
      const response = await fetch(`${api.baseUrl}/api/audit/export?${query}`, {
        headers: { authorization: `Token ${owner.token}` },
      });
      return {
        status: response.status,
        type: response.headers.get("content-type"),
        text: await response.text(),
      };
    };
    const lines = await exported("format=jsonl&action=groups.create");
    expect(lines.type).toContain("application/x-ndjson");
    const parsed = lines.text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AuditEntry);
    expect(parsed.map((entry) => entry.seq)).toEqual([4, 3, 2]);

    const csv = await exported("format=csv");
    expect(csv.type).toContain("text/csv");
    const rows = csv.text.trim().split("\r\n");
    expect(rows[0]).toMatch(/^seq,at,actor_user_id,/);
    expect(rows).toHaveLength(5);
    // A spreadsheet never runs a value as a formula; commas and quotes stay inside their field.
    expect(csv.text).toContain(`"{""account_id"":`);
    expect(csv.text).toContain(`""name"":""b,c""`);
    expect(csv.text).toContain(",'=HYPERLINK(1),");
    expect(csv.text).not.toContain(",=HYPERLINK");
    expect((await exported("format=xml")).status).toBe(400);
  });

  it("keeps entries a year unless the owner sets another retention, a change audited like any", async () => {
    const owner = await api.bootstrap();
    const admin = await api.addMember(owner.token, "admin");
    const path = "/api/audit/settings";
    expect((await api.call("GET", path, { token: admin.token })).body).toEqual({ retention_days: 365 });
    expect((await api.call("PUT", path, { token: admin.token, body: { retention_days: 30 } })).status).toBe(
      403,
    );
    expect((await api.call("PUT", path, { token: owner.token, body: { retention_days: 7 } })).status).toBe(
      400,
    );
    const set = await api.call("PUT", path, { token: owner.token, body: { retention_days: 90 } });
    expect(set).toMatchObject({ status: 200, body: { retention_days: 90 } });
    expect((await api.call("GET", path, { token: admin.token })).body).toEqual({ retention_days: 90 });

    const entries = await trail(owner.token, "&target_type=audit_settings");
    expect(entries.map((entry) => [entry.action, entry.outcome, entry.status])).toEqual([
      ["audit.settings.update", "refused", 403],
      ["audit.settings.update", "failed", 400],
      ["audit.settings.update", "succeeded", undefined],
    ]);
    expect(entries[2]).toMatchObject({ after: { retention_days: 90 } });
    expect(entries[2]).not.toHaveProperty("before");
  });
});
