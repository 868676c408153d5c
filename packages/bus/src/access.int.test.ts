import { randomUUID } from "node:crypto";
import {
  type BusService,
  CONSUMPTION_CENSUS_SUBJECT,
  Consumption,
  ControlPlane,
  Events,
  Verifier,
} from "@agentnet/contracts";
import { connectTestBus, isolatedNats, uniqueId } from "@agentnet/testkit";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  announceCallerRevocation,
  contendForLeadership,
  ensureDurableConsumer,
  ensureRequestStream,
  followCallerRevocations,
  publishEvent,
  request,
  serve,
} from "./index";

/** Resolves with the server's permission error for a subscription, or "delivered" if a message arrives. */
function subscribeOutcome(nc: NatsConnection, subject: string): Promise<string> {
  return new Promise((resolve) => {
    const sub = nc.subscribe(subject, {
      callback: (error) => resolve(error ? String(error) : "delivered"),
    });
    void sub.closed.then(
      () => resolve("closed"),
      (error: unknown) => resolve(String(error)),
    );
  });
}

const caller = (accountId: string) => ({
  account_id: accountId,
  user_id: "usr_forged",
  email: "attacker@example.com",
  name: "Attacker",
  role: "owner" as const,
  group_ids: [],
});

describe("the bus admits each service as itself, with only its subjects", () => {
  const services = new Map<BusService, NatsConnection>();
  const as = (service: BusService) => {
    const nc = services.get(service);
    if (!nc) throw new Error(`no connection for ${service}`);
    return nc;
  };
  let operator: NatsConnection;

  beforeAll(async () => {
    operator = await connectTestBus();
    for (const service of [
      "control-plane",
      "gateway-proxy",
      "api-gateway",
      "telemetry",
      "provider-verifier",
    ] as const) {
      services.set(service, await connectTestBus(service));
    }
  });
  afterAll(async () => {
    for (const nc of services.values()) await nc.close();
    await operator.close();
  });

  it("refuses a client without credentials or with another service's password", async () => {
    const { url, credentials } = await isolatedNats();
    await expect(connect({ servers: url, reconnect: false })).rejects.toThrow(/authoriz/i);
    await expect(
      connect({ servers: url, reconnect: false, user: "control-plane", pass: credentials["gateway-proxy"] }),
    ).rejects.toThrow(/authoriz/i);
  });

  it("does not deliver a forged `caller` sent with the proxy's credentials to the control-plane", async () => {
    let handled = 0;
    serve(
      as("control-plane"),
      ControlPlane.tokensCreate,
      () => {
        handled++;
        throw new Error("must not be called");
      },
      { queue: "control-plane" },
    );
    await as("control-plane").flush();
    const forged = request(
      as("gateway-proxy"),
      ControlPlane.tokensCreate,
      { caller: caller(uniqueId("acc")), user_id: "usr_forged", body: { name: "stolen", expires_in: 30 } },
      { timeoutMs: 1_000 },
    );
    await expect(forged).rejects.toThrow(/permission/i);
    expect(handled).toBe(0);
  });

  it("lets the proxy resolve tokens, the api-gateway call caller endpoints, and services answer", async () => {
    serve(as("control-plane"), ControlPlane.authResolve, () => caller("acc_1"), { queue: "control-plane" });
    await as("control-plane").flush();
    const tokenHash = "a".repeat(64);
    await expect(
      request(as("gateway-proxy"), ControlPlane.authResolve, { token_hash: tokenHash }),
    ).resolves.toMatchObject({
      account_id: "acc_1",
    });
    await expect(
      request(as("api-gateway"), ControlPlane.authResolve, { token_hash: tokenHash }),
    ).resolves.toMatchObject({
      account_id: "acc_1",
    });
  });

  it("keeps provider keys and tokens off other services: only the control-plane may call the verifier", async () => {
    let verified = 0;
    serve(
      as("provider-verifier"),
      Verifier.verifyProvider,
      () => {
        verified++;
        throw new Error("must not be called");
      },
      { queue: "provider-verifier" },
    );
    await as("provider-verifier").flush();
    const probe = { provider_id: "openai_api", upstream_url: "http://127.0.0.1:1/v1", api_key: "sk-secret" };
    await expect(
      as("api-gateway").request(Verifier.verifyProvider.subject, JSON.stringify(probe), { timeout: 1_000 }),
    ).rejects.toThrow(/permission/i);
    expect(verified).toBe(0);
  });

  it("refuses subscriptions to another service's subjects and inboxes", async () => {
    const proxy = as("gateway-proxy");
    for (const subject of [
      ControlPlane.authResolve.subject,
      "agn.ctl.>",
      "agn.verify.>",
      Consumption.lease.subject,
      "_INBOX.>",
      "_INBOX_api-gateway.>",
      ">",
    ]) {
      await expect(subscribeOutcome(proxy, subject)).resolves.toMatch(/permission/i);
    }
    await expect(subscribeOutcome(as("telemetry"), Events.requestsAll)).resolves.toMatch(/permission/i);
  });

  it("lets the proxy publish request events and telemetry consume them, not the other way round", async () => {
    await ensureRequestStream(as("gateway-proxy"));
    const accountId = uniqueId("acc");
    await publishEvent(as("gateway-proxy"), Events.requests(accountId), { v: 1 }, randomUUID());
    const durable = uniqueId("access");
    const consumer = await ensureDurableConsumer(as("telemetry"), {
      durable,
      filterSubject: Events.requests(accountId),
      inactiveThresholdMs: 60_000,
    });
    const message = await consumer.next({ expires: 2_000 });
    expect(message?.json()).toEqual({ v: 1 });
    message?.ack();
    await expect(
      ensureDurableConsumer(as("gateway-proxy"), { durable: uniqueId("proxy"), inactiveThresholdMs: 60_000 }),
    ).rejects.toThrow();
    await expect(
      publishEvent(as("telemetry"), Events.requests(accountId), { v: 1 }, randomUUID()),
    ).rejects.toThrow();
  });

  it("lets only the control-plane announce caller revocations, which the proxy and the api-gateway hear", async () => {
    const heard = new Map<BusService, unknown[]>();
    const followers = (["gateway-proxy", "api-gateway"] as const).map((service) => {
      const events: unknown[] = [];
      heard.set(service, events);
      return followCallerRevocations(
        as(service),
        { revoke: (event) => events.push(event), distrustAll: () => events.push("distrust") },
        () => events.push("malformed"),
      );
    });
    for (const service of ["gateway-proxy", "api-gateway"] as const) await as(service).flush();
    const revocation = (accountId: string) => ({
      v: 1 as const,
      account_id: accountId,
      whole_account: true,
      user_ids: [],
      token_hashes: [],
      at: new Date().toISOString(),
    });
    // The proxy's forgery is refused by the server; the control-plane's arrives.
    as("gateway-proxy").publish(Events.callersRevoked, JSON.stringify(revocation("acc_forged")));
    await as("gateway-proxy").flush();
    const genuine = revocation(uniqueId("acc"));
    await announceCallerRevocation(as("control-plane"), genuine);
    for (const service of ["gateway-proxy", "api-gateway"] as const) {
      await as(service).flush();
      expect(heard.get(service)).toEqual([genuine]);
    }
    await expect(subscribeOutcome(as("telemetry"), Events.callersRevoked)).resolves.toMatch(/permission/i);
    for (const follower of followers) follower.stop();
  });

  it("lets consumption take a census that every proxy answers, and nobody else", async () => {
    const consumption = await connectTestBus("consumption");
    const proxies = [as("gateway-proxy"), await connectTestBus("gateway-proxy")];
    for (const [index, proxy] of proxies.entries()) {
      proxy.subscribe(CONSUMPTION_CENSUS_SUBJECT, {
        callback: (_error, msg) => {
          msg.respond(JSON.stringify({ proxy: index }));
        },
      });
      await proxy.flush();
    }
    const answers: string[] = [];
    for await (const answer of await consumption.requestMany(CONSUMPTION_CENSUS_SUBJECT, "{}", {
      strategy: "count",
      maxMessages: 2,
      maxWait: 5_000,
    })) {
      answers.push(answer.string());
    }
    expect(answers.sort()).toEqual(['{"proxy":0}', '{"proxy":1}']);
    await expect(
      as("control-plane").request(CONSUMPTION_CENSUS_SUBJECT, "{}", { timeout: 1_000 }),
    ).rejects.toThrow(/permission/i);
    await proxies[1]?.close();
    await consumption.close();
  });

  it("lets consumption hold the leadership lease", async () => {
    const consumption = await connectTestBus("consumption");
    const leadership = await contendForLeadership(consumption, {
      key: uniqueId("lead"),
      holder: "test",
      onElected: async () => undefined,
      onDeposed: async () => undefined,
      onError: (error) => {
        throw error;
      },
    });
    expect(leadership.isLeader()).toBe(true);
    await leadership.release();
    await consumption.close();
  });
});
