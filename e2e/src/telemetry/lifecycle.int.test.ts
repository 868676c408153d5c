import type { AccountDeletedEvent } from "@agentnet/contracts";
import { Events } from "@agentnet/contracts";
import { createLogger } from "@agentnet/service-kit";
import { followAccountDeletions } from "@agentnet/telemetry/app";
import { makeEvent, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

let stack: TelemetryStack;
beforeAll(async () => {
  stack = await startTelemetryStack();
});
afterAll(() => stack.stop());

const daysAgo = (now: Date, days: number, hours = 0) =>
  new Date(now.getTime() - days * 86_400_000 - hours * 3_600_000).toISOString();

describe("retention sweep", () => {
  it("deletes access-log rows past each account's retention, keeps usage, and keeps forever at 0", async () => {
    const now = new Date();
    const short = await stack.newAccount();
    const forever = await stack.newAccount();
    await stack.configure(short.owner, { access_log_retention_days: 3 });
    await stack.configure(forever.owner, { access_log_retention_days: 0 });
    const old = (accountId: string) => [
      makeEvent({ account_id: accountId, timestamp: daysAgo(now, 400) }),
      makeEvent({ account_id: accountId, timestamp: daysAgo(now, 5) }),
      makeEvent({ account_id: accountId, timestamp: daysAgo(now, 3, 1) }),
      makeEvent({ account_id: accountId, timestamp: daysAgo(now, 2, 23) }),
      makeEvent({ account_id: accountId, timestamp: daysAgo(now, 0) }),
    ];
    const shortEvents = old(short.accountId);
    const expiredSession = makeEvent({
      account_id: short.accountId,
      session_id: "s-expired",
      timestamp: daysAgo(now, 4),
    });
    await stack.publish([...shortEvents, expiredSession, ...old(forever.accountId)]);
    await stack.settle();
    // Rolled first, so the counts below also prove the hourly rollup follows the sweep.
    await stack.telemetry.rollHours(now);

    const plan = await stack.telemetry.sweepRetention(now);
    expect(plan.deletes.map((d) => d.account_id)).toContain(short.accountId);
    expect(plan.deletes.map((d) => d.account_id)).not.toContain(forever.accountId);

    const kept = await stack.accessLogs(short.owner, { sort_order: "asc" });
    expect(kept.data.map((e) => e.id)).toEqual([shortEvents[3]?.id, shortEvents[4]?.id]);
    // Counts that name a user read access_logs_by_user, which the sweep trims alike.
    expect((await stack.accessLogs(short.owner, { user_id: "user_default" })).total_records).toBe(2);
    // The expired session is gone from the session count too, not only its entries.
    expect((await stack.sessions(short.owner)).total_records).toBe(2);
    expect((await stack.accessLogs(forever.owner)).total_records).toBe(5);
    const usage = await stack.usage(short.owner, { granularity: "month" });
    expect(usage.reduce((sum, b) => sum + b.total_tokens, 0)).toBe(6 * 150);
    // The file's first test also pays for chDB's first reads and merges: 30 s on a slow day.
  }, 60_000);

  it("drops a whole day partition when every account in it is past retention", async () => {
    const now = new Date();
    // The only rows of that day are this account's, and it runs on the default 30 days.
    const { accountId, owner } = await stack.newAccount();
    const stale = makeEvent({ account_id: accountId, timestamp: "2000-01-05T10:00:00Z" });
    await stack.publish([stale]);
    await stack.settle();
    await stack.telemetry.rollHours(now);
    const plan = await stack.telemetry.sweepRetention(now);
    expect(plan.dropPartitions).toContain("20000105");
    expect((await stack.accessLogs(owner)).total_records).toBe(0);
    expect((await stack.accessLogs(owner, { user_id: "user_default" })).total_records).toBe(0);
    expect((await stack.usage(owner)).map((b) => b.total_tokens)).toEqual([150]);
  });
});

describe("account deletion", () => {
  it("removes the account's access logs and usage, and nobody else's", async () => {
    const gone = await stack.newAccount();
    const stays = await stack.newAccount();
    await stack.publish([
      makeEvent({ account_id: gone.accountId }),
      makeEvent({ account_id: stays.accountId }),
    ]);
    await stack.settle();
    const event: AccountDeletedEvent = {
      v: 1,
      account_id: gone.accountId,
      deleted_at: new Date().toISOString(),
    };
    stack.nc.publish(Events.accountDeleted, JSON.stringify(event));

    const rows = async (table: string, accountId: string) =>
      (await stack.warehouse.query(`SELECT id FROM ${table} WHERE account_id = {a:String}`, { a: accountId }))
        .length;
    const deadline = Date.now() + 10_000;
    while ((await rows("usage_events", gone.accountId)) > 0 && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(await rows("usage_events", gone.accountId)).toBe(0);
    expect(await rows("access_logs", gone.accountId)).toBe(0);
    expect(await rows("access_logs_by_user", gone.accountId)).toBe(0);
    expect(await rows("usage_events", stays.accountId)).toBe(1);
    expect(await rows("access_logs_by_user", stays.accountId)).toBe(1);
    expect((await stack.accessLogs(stays.owner)).total_records).toBe(1);
  });

  it("deletes an account's rows even when telemetry was not following deletions at the time", async () => {
    const gone = await stack.newAccount();
    await stack.publish([makeEvent({ account_id: gone.accountId })]);
    await stack.settle();
    const event: AccountDeletedEvent = {
      v: 1,
      account_id: gone.accountId,
      deleted_at: new Date().toISOString(),
    };
    stack.nc.publish(Events.accountDeleted, JSON.stringify(event));
    await stack.nc.flush();

    // A telemetry coming up later, with a durable consumer that never saw the event live.
    const late = await followAccountDeletions(
      {
        nc: stack.nc,
        warehouse: stack.warehouse,
        logger: createLogger("late", "silent"),
        requestTimeoutMs: 5_000,
      },
      uniqueId("late-telemetry"),
    );
    const count = async () =>
      (
        await stack.warehouse.query("SELECT id FROM usage_events WHERE account_id = {a:String}", {
          a: gone.accountId,
        })
      ).length;
    const deadline = Date.now() + 10_000;
    while ((await count()) > 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
    await late.stop();
    expect(await count()).toBe(0);
  });
});
