import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { type NatsConnection, request, requestPaged } from "@agentnet/bus";
import { type Caller, ControlPlane, type Group } from "@agentnet/contracts";
import {
  connectTestBus,
  connectTestMongo,
  eventually,
  TEST_SEALING_KEY,
  testBackends,
  testBusEnv,
  uniqueId,
} from "@agentnet/testkit";
import type { Connection } from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MAIN = join(dirname(createRequire(import.meta.url).resolve("@agentnet/control-plane/app")), "main.ts");

/** A database of this test alone: recovery here must not touch other files' changes in flight. */
const DATABASE = uniqueId("audit_crash");

/** A control-plane in a process of its own (as `agentnet up` runs it), ready once it logged so. */
async function startControlPlaneProcess(env: Record<string, string>) {
  const mongoUrl = new URL(testBackends().mongoUrl);
  mongoUrl.pathname = `/${DATABASE}`;
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", createRequire(import.meta.url).resolve("tsx"), MAIN],
    {
      env: {
        ...process.env,
        ...(await testBusEnv("control-plane")),
        AGN_SEALING_KEY: TEST_SEALING_KEY,
        MONGO_URL: mongoUrl.toString(),
        LOG_LEVEL: "info",
        ...env,
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? code)),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the control-plane did not get ready in 30 s")), 30_000);
    void exited.then((how) => reject(new Error(`the control-plane exited (${how}) before it was ready`)));
    createInterface({ input: child.stdout as NonNullable<ChildProcess["stdout"]> }).on("line", (line) => {
      if (line.includes('"ready":true')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    exited,
    stop: () => {
      child.kill("SIGKILL");
      return exited;
    },
  };
}

let operator: NatsConnection;
let store: Connection;
beforeAll(async () => {
  operator = await connectTestBus();
  store = await connectTestMongo(DATABASE);
});
afterAll(async () => {
  await operator?.close();
  await store?.dropDatabase();
  await store?.close();
});

/** A new account, and its owner as the control-plane sees a caller. */
async function bootstrapAccount(): Promise<Caller> {
  const boot = await request(operator, ControlPlane.accountsBootstrap, {
    email: `${uniqueId("o")}@example.com`,
  });
  return {
    account_id: boot.account_id,
    user_id: boot.user_id,
    role: "owner",
    group_ids: [],
    email: "owner@example.com",
    name: "owner",
  };
}

/**
 * What the next control-plane makes of the intents the killed one left: it starts, writes their
 * entries, and answers the account's trail (newest first) and its verification.
 */
async function recoveredTrail(caller: Caller) {
  const recovering = await startControlPlaneProcess({ AGN_AUDIT_RECOVER_AFTER_SECONDS: "0.5" });
  try {
    await eventually(
      async () =>
        (await store.collection("audit_intents").countDocuments({ account_id: caller.account_id })) === 0,
      15_000,
    );
    const { entries } = await requestPaged(operator, ControlPlane.auditList, {
      caller,
      query: { limit: 10 },
    });
    return { entries, verification: await request(operator, ControlPlane.auditVerify, { caller }) };
  } finally {
    await recovering.stop();
  }
}

describe("a control-plane killed between a change and its audit entry", () => {
  it("leaves the change's intent, and the next control-plane writes its entry as interrupted, the chain intact", async () => {
    const crashing = await startControlPlaneProcess({ AGN_FAULT_CRASH_BEFORE_AUDIT_ENTRY: "groups.update" });
    const caller = await bootstrapAccount();
    const group: Group = await request(operator, ControlPlane.groupsCreate, {
      caller,
      body: { name: "before" },
    });

    // The rename is stored, then the process dies (SIGKILL) before the entry: no answer comes.
    await expect(
      request(
        operator,
        ControlPlane.groupsUpdate,
        { caller, group_id: group.id, body: { name: "after" } },
        { timeoutMs: 3_000 },
      ),
    ).rejects.toThrow();
    expect(await crashing.exited).toBe("SIGKILL");
    expect(await store.collection("groups").findOne({ _id: group.id as never })).toMatchObject({
      name: "after",
    });
    expect(await store.collection("audit_intents").countDocuments({ account_id: caller.account_id })).toBe(1);
    expect(await store.collection("audit_entries").countDocuments({ account_id: caller.account_id })).toBe(2);

    const { entries: trail, verification } = await recoveredTrail(caller);
    expect(trail.map((entry) => [entry.seq, entry.action, entry.outcome])).toEqual([
      [3, "groups.update", "interrupted"],
      [2, "groups.create", "succeeded"],
      [1, "accounts.bootstrap", "succeeded"],
    ]);
    expect(trail[0]).toMatchObject({
      target: { type: "group", id: group.id },
      before: { name: "before" },
      after: { name: "after" },
    });
    expect(verification).toMatchObject({ intact: true, checked: 3 });
  }, 90_000);

  it("names what an interrupted create made: its id is chosen before the change", async () => {
    const crashing = await startControlPlaneProcess({ AGN_FAULT_CRASH_BEFORE_AUDIT_ENTRY: "groups.create" });
    const caller = await bootstrapAccount();
    await expect(
      request(operator, ControlPlane.groupsCreate, { caller, body: { name: "made" } }, { timeoutMs: 3_000 }),
    ).rejects.toThrow();
    expect(await crashing.exited).toBe("SIGKILL");
    const made = await store.collection("groups").findOne({ account_id: caller.account_id, name: "made" });
    expect(made).not.toBeNull();
    expect(await store.collection("audit_intents").findOne({ account_id: caller.account_id })).toMatchObject({
      action: "groups.create",
      target: { type: "group", id: made?._id },
    });

    const { entries: trail } = await recoveredTrail(caller);
    expect(trail[0]).toMatchObject({
      action: "groups.create",
      outcome: "interrupted",
      target: { type: "group", id: made?._id },
      after: { name: "made" },
    });
    expect(trail[0]).not.toHaveProperty("before");
  }, 90_000);
});
