import { insertEvents } from "@agentnet/telemetry/store";
import { eventually, makeEvent } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelemetryStack, type TelemetryStack } from "./stack";

let stack: TelemetryStack;
beforeAll(async () => {
  stack = await startTelemetryStack();
});
afterAll(() => stack.stop());

const at = (day: number, seconds = 0) => new Date(Date.UTC(2025, 2, day, 0, 0, seconds)).toISOString();

// Rows written straight through the ingest's insert path, three times: the copies sit in separate,
// unmerged parts, as after redeliveries, which is what the bounded read paths must see through.
describe("read paths over unmerged duplicates", () => {
  it("pages access logs whole and in order when copies crowd the first rows", async () => {
    const { accountId, owner } = await stack.newAccount();
    const events = Array.from({ length: 12 }, (_, i) =>
      makeEvent({ account_id: accountId, timestamp: at(10, i) }),
    );
    for (let copy = 0; copy < 3; copy++) await insertEvents(stack.warehouse, events);

    const newestFirst = events.map((event) => event.id).reverse();
    const pages = [];
    for (const page of ["1", "2", "3"]) pages.push(await stack.accessLogs(owner, { page, page_size: "5" }));
    expect(pages.map((p) => p.total_records)).toEqual([12, 12, 12]);
    expect(pages.flatMap((p) => p.data.map((entry) => entry.id))).toEqual(newestFirst);
  });

  it("aggregates a recent session over its whole history and counts each session once", async () => {
    const { accountId, owner } = await stack.newAccount();
    const long = ["2", "5", "10"].map((day, i) =>
      makeEvent({ account_id: accountId, session_id: "s-long", timestamp: at(Number(day), 3600 * 12 + i) }),
    );
    const singletons = Array.from({ length: 60 }, (_, i) =>
      makeEvent({ account_id: accountId, timestamp: at(10, 3600 * 11 + i) }),
    );
    for (let copy = 0; copy < 3; copy++) await insertEvents(stack.warehouse, [...long, ...singletons]);

    const first = await stack.sessions(owner, { page_size: "10" });
    expect(first.total_records).toBe(61);
    const [latest] = first.data;
    expect(latest).toMatchObject({ session_id: "s-long", request_count: 3, started_at: long[0]?.timestamp });
    expect(latest?.entries.map((entry) => entry.id)).toEqual(long.map((event) => event.id));
    const newestSingletons = singletons.map((event) => event.id).reverse();
    expect(first.data.slice(1).map((s) => s.entries[0]?.id)).toEqual(newestSingletons.slice(0, 9));
    const second = await stack.sessions(owner, { page_size: "10", page: "2" });
    expect(second.data.map((s) => s.entries[0]?.id)).toEqual(newestSingletons.slice(9, 19));
    expect(second.data.every((s) => s.request_count === 1 && s.entries.length === 1)).toBe(true);
  });
});

describe("counts that name a user", () => {
  it("read the user-sorted copy and count each request and session once, as over the whole log", async () => {
    const { accountId, owner } = await stack.newAccount();
    const of = (user_id: string, i: number, session_id = "") =>
      makeEvent({ account_id: accountId, user_id, session_id, timestamp: at(10, i) });
    const events = [
      ...Array.from({ length: 5 }, (_, i) => of("u-a", i, "s-a")),
      ...Array.from({ length: 3 }, (_, i) => of("u-a", 10 + i)),
      ...Array.from({ length: 4 }, (_, i) => of("u-b", 20 + i, "s-b")),
    ];
    for (let copy = 0; copy < 3; copy++) await insertEvents(stack.warehouse, events);

    const [copies] = await stack.warehouse.query<{ rows: string }>(
      "SELECT count() AS rows FROM access_logs_by_user WHERE account_id = {a:String}",
      { a: accountId },
    );
    expect(Number(copies?.rows)).toBeGreaterThanOrEqual(events.length);
    const logs = await stack.accessLogs(owner, { user_id: "u-a" });
    expect(logs.total_records).toBe(8);
    expect(logs.data.every((entry) => entry.user_id === "u-a")).toBe(true);
    expect((await stack.accessLogs(owner, { user_id: "u-a", search: events[0]?.id })).total_records).toBe(1);
    expect((await stack.sessions(owner, { user_id: "u-a" })).total_records).toBe(4);
    expect((await stack.sessions(owner, { user_id: "u-b" })).total_records).toBe(1);
    // A search with a NUL reads the fields themselves, so it stays on access_logs.
    expect((await stack.accessLogs(owner, { user_id: "u-a", search: "x\0y" })).total_records).toBe(0);
  });
});

describe("usage and log counts rolled into hours", () => {
  it("counts each request once from the rollups, the events or both, late events included", async () => {
    const { accountId, owner } = await stack.newAccount();
    const events = Array.from({ length: 6 }, (_, i) =>
      makeEvent({
        account_id: accountId,
        timestamp: at(10, 3600 * i + 30),
        cost_usd: 0.000000001 * (i + 1),
        group_ids: [i % 2 === 0 ? "g-even" : "g-odd"],
      }),
    );
    for (let copy = 0; copy < 3; copy++) await insertEvents(stack.warehouse, events);
    const fromEvents = await stack.usage(owner, { granularity: "hour" });
    expect(fromEvents.map((bucket) => bucket.total_tokens)).toEqual([150, 150, 150, 150, 150, 150]);

    // Twice: a recomputed hour replaces the earlier computation instead of adding to it.
    await stack.telemetry.rollHours();
    await stack.telemetry.rollHours(new Date(Date.now() + 3_600_000));
    const rolled = await stack.warehouse.query(
      "SELECT hour FROM usage_hourly WHERE account_id = {a:String}",
      {
        a: accountId,
      },
    );
    expect(rolled.length).toBeGreaterThanOrEqual(6);
    expect(await stack.usage(owner, { granularity: "hour" })).toEqual(fromEvents);
    const [day] = await stack.usage(owner, { granularity: "day" });
    expect(day).toMatchObject({ total_tokens: 900, cost_usd: 0.000000021 });
    expect((await stack.usage(owner, { group_id: "g-odd" }))[0]?.total_tokens).toBe(450);
    // A range starting inside an hour: that hour from the events, the later ones from the rollup.
    const partial = await stack.usage(owner, { granularity: "hour", start_date: at(10, 7200 + 20) });
    expect(partial.map((bucket) => bucket.total_tokens)).toEqual([150, 150, 150, 150]);

    // A late event for a rolled hour, delivered twice through the ingest, counts once.
    const late = makeEvent({ account_id: accountId, timestamp: at(10, 60), cost_usd: 0.000000007 });
    await stack.publish([late]);
    await stack.publish([late], (event) => `${event.id}-again`);
    await stack.settle();
    // settle() sees the marker's insert; the ingest recomputes the rolled hour after inserting and
    // before acking, so the reads may trail the insert by that recomputation.
    await eventually(async () => {
      const [withLate] = await stack.usage(owner, { granularity: "day" });
      const logs = await stack.accessLogs(owner);
      const sessions = await stack.sessions(owner);
      return withLate?.total_tokens === 1050 && logs.total_records === 7 && sessions.total_records === 7;
    });
    const [withLate] = await stack.usage(owner, { granularity: "day" });
    expect(withLate).toMatchObject({ total_tokens: 1050, cost_usd: 0.000000028 });
    // The unfiltered log and session counts read the rolled hours' counts, recomputed alike.
    expect((await stack.accessLogs(owner)).total_records).toBe(7);
    expect((await stack.sessions(owner)).total_records).toBe(7);
  });
});
