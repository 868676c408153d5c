import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { type NatsConnection, request } from "@agentnet/bus";
import {
  AppError,
  CONSUMPTION_LEADER_SUBJECT,
  Consumption,
  ConsumptionLeaderAnnouncement,
  type LeaseRequest,
} from "@agentnet/contracts";
import { connectTestBus, testBackends, testBusEnv, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MAIN = join(import.meta.dirname, "main.ts");

/** A consumption replica as its own process (as `agentnet up` runs it); resolves once it is ready. */
async function startProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", createRequire(import.meta.url).resolve("tsx"), MAIN], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  process.once("exit", () => child.kill("SIGKILL"));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("consumption did not get ready in 30 s")), 30_000);
    child.once("exit", (code) => reject(new Error(`consumption exited with ${code}`)));
    createInterface({ input: child.stdout as NonNullable<ChildProcess["stdout"]> }).on("line", (line) => {
      if (line.includes('"ready":true')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}

describe("a frozen consumption leader (SIGSTOP), with a standby", () => {
  const replicas: ChildProcess[] = [];
  let nc: NatsConnection;

  beforeAll(async () => {
    const mongo = new URL(testBackends().mongoUrl);
    mongo.pathname = "/agentnet_test_consumption_frozen";
    const env = {
      ...(await testBusEnv("consumption")),
      MONGO_URL: mongo.toString(),
      CONSUMER_DURABLE: uniqueId("frozen"),
      LEASE_TTL_SECONDS: "2",
      QUOTA_LEASE_TTL_SECONDS: "2",
      LOG_LEVEL: "info",
    };
    // The first replica leads; the second stands by.
    replicas.push(await startProcess(env));
    replicas.push(await startProcess(env));
    nc = await connectTestBus();
  }, 90_000);

  afterAll(async () => {
    for (const replica of replicas) replica.kill("SIGKILL");
    await nc?.close();
  });

  it("gets no more lease requests once the standby leads: every one is answered", async () => {
    // A proxy's view: where the leader last said its lease endpoint answers.
    let leaseSubject = Consumption.lease.subject;
    const announcements = nc.subscribe(CONSUMPTION_LEADER_SUBJECT, {
      callback: (_error, msg) => {
        const parsed = ConsumptionLeaderAnnouncement.safeParse(msg.json());
        if (parsed.success) leaseSubject = parsed.data.lease_subject;
      },
    });
    const windowStart = Math.floor(Date.now() / 3_600_000) * 3_600;
    const ask: LeaseRequest = {
      account_id: uniqueId("acc"),
      proxy_id: uniqueId("proxy"),
      asks: [
        {
          counter: {
            dimension_kind: "user",
            dimension_id: uniqueId("usr"),
            window_seconds: 3_600,
            window_start: windowStart,
          },
          cap_tokens: 1_000_000,
          committed: { tokens: 0, cost_nanos: 0, calls: 0 },
          need: { tokens: 10, cost_nanos: 0, calls: 0 },
        },
      ],
    };
    // Answered means a reply, a grant or a refusal (a new leader says 503 until old leases lapse);
    // unanswered means no reply within the proxy's lease timeout.
    const answered = () =>
      request(nc, { ...Consumption.lease, subject: leaseSubject }, ask, { timeoutMs: 1_000 }).then(
        () => true,
        (error: unknown) => !(error instanceof AppError && error.status === 504),
      );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(leaseSubject).toMatch(/^agn\.consumption\.lease\.\w+$/);
    expect(await answered()).toBe(true);

    const frozenTerm = leaseSubject;
    replicas[0]?.kill("SIGSTOP");
    const frozenAt = Date.now();
    const outcomes: { atMs: number; subject: string; answered: boolean }[] = [];
    while (Date.now() - frozenAt < 10_000) {
      const subject = leaseSubject;
      outcomes.push({ atMs: Date.now() - frozenAt, subject, answered: await answered() });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    announcements.unsubscribe();
    // The standby leads once the leadership lease (2 s) lapses and announces its own term at once;
    // from then on every request goes there and is answered.
    const takeover = outcomes.findIndex((outcome) => outcome.subject !== frozenTerm);
    expect(takeover, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(outcomes[takeover]?.atMs).toBeLessThan(6_000);
    expect(
      outcomes.slice(takeover).every((outcome) => outcome.answered),
      JSON.stringify(outcomes),
    ).toBe(true);
  }, 60_000);
});
