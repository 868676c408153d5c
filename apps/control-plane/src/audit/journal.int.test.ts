import { createLogger } from "@agentnet/service-kit";
import { connectTestMongo, uniqueId } from "@agentnet/testkit";
import type { Connection } from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuditModels, createAuditModels } from "../store/audit-models";
import { AuditJournal } from "./journal";

let connection: Connection;
let models: AuditModels;
let journal: AuditJournal;
beforeAll(async () => {
  connection = await connectTestMongo();
  models = await createAuditModels(connection);
  journal = new AuditJournal(models, createLogger("test", "silent"));
});
afterAll(async () => {
  await connection.close();
});

const DAY = 86_400_000;

/** An account with `count` entries, the first `old` of them made `ageDays` ago. */
async function accountWith(count: number, old: number, ageDays: number): Promise<string> {
  const accountId = uniqueId("acc");
  for (let index = 0; index < count; index++) {
    await journal.record({
      account_id: accountId,
      actor: { user_id: "u" },
      action: "groups.create",
      target: { type: "group" },
      outcome: "refused",
      status: 403,
      error_code: "forbidden",
    });
  }
  // Made long ago: their `at` is moved back (which their hashes do not hold: they are dropped).
  const oldest = await models.AuditEntry.find({ account_id: accountId }).sort({ seq: 1 }).limit(old).lean();
  await models.AuditEntry.updateMany(
    { _id: { $in: oldest.map((entry) => entry._id) } },
    { $set: { at: new Date(Date.now() - ageDays * DAY) } },
  );
  return accountId;
}

describe("retention", () => {
  it("drops entries past the account's retention, never the newest, and the chain verifies from the oldest kept", async () => {
    const byDefault = await accountWith(5, 3, 400);
    const short = await accountWith(3, 3, 40);
    await models.AuditSettings.create({ _id: short, account_id: short, retention_days: 30 });
    const young = await accountWith(2, 2, 100);

    await journal.prune();

    const seqs = async (accountId: string) =>
      (await models.AuditEntry.find({ account_id: accountId }).sort({ seq: 1 }).lean()).map(
        (entry) => entry.seq,
      );
    expect(await seqs(byDefault)).toEqual([4, 5]);
    expect(await journal.verify(byDefault)).toEqual({ intact: true, checked: 2, first_seq: 4, last_seq: 5 });
    // All past retention, but the chain goes on from its newest entry.
    expect(await seqs(short)).toEqual([3]);
    expect(await seqs(young)).toEqual([1, 2]);

    await journal.record({
      account_id: short,
      actor: {},
      action: "groups.create",
      target: { type: "group" },
      outcome: "failed",
      status: 400,
    });
    expect(await seqs(short)).toEqual([3, 4]);
  });
});
