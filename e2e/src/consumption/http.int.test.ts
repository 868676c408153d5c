import { startTestApi } from "@agentnet/api-gateway/testing";
import { request } from "@agentnet/bus";
import {
  eventFor,
  held,
  makeLimits,
  makeScope,
  proxyOn,
  publish,
  type Replica,
  startReplica,
  TestClock,
} from "@agentnet/consumption/test-support";
import { type ConsumptionCounter, ControlPlane, type Group } from "@agentnet/contracts";
import { startControlPlane } from "@agentnet/control-plane/app";
import { parseSealingKeys } from "@agentnet/sealing";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus, connectTestMongo, eventually, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";
import type { Connection } from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The api-gateway and control-plane in this process, in front of a consumption replica: the public
// endpoint is exercised the way a client calls it, token and all.
let consumption: Replica;
const clock = new TestClock(Date.now());
let api: Awaited<ReturnType<typeof startTestApi>> | undefined;
let baseUrl: string;
let cpConnection: Connection;
let gatewayBus: Awaited<ReturnType<typeof connectTestBus>>;
beforeAll(async () => {
  const logger = createLogger("test", "silent");
  gatewayBus = await connectTestBus("consumption-http");
  cpConnection = await connectTestMongo();
  await startControlPlane({
    nc: gatewayBus,
    connection: cpConnection,
    logger,
    sealingKey: parseSealingKeys(TEST_SEALING_KEY),
  });
  consumption = await startReplica("agentnet_test_consumption_http", clock, {
    durable: uniqueId("consumption"),
  });
  api = await startTestApi({ nc: gatewayBus, logger, bodyLimitBytes: 65_536 });
  baseUrl = api.url;
});
afterAll(async () => {
  await api?.stop();
  await consumption?.stop();
  await gatewayBus?.drain();
  await cpConnection?.close();
});

const get = async <T>(path: string, token?: string) => {
  const headers: Record<string, string> = { accept: "application/json" };
  if (token) headers.authorization = `Token ${token}`;
  const response = await fetch(`${baseUrl}${path}`, { headers });
  return { status: response.status, body: (await response.json()) as T };
};

describe("GET /api/agent-network/consumption", () => {
  it("answers 401 without a token", async () => {
    expect((await get("/api/agent-network/consumption")).status).toBe(401);
  });

  it("returns [] for a fresh account, then the counters of consumed requests", async () => {
    const owner = await request(gatewayBus, ControlPlane.accountsBootstrap, {
      email: `${uniqueId("owner")}@example.com`,
    });
    expect(await get("/api/agent-network/consumption", owner.token)).toEqual({ status: 200, body: [] });

    const groups = await get<Group[]>("/api/groups", owner.token);
    const all = groups.body.find((group) => group.name === "All");
    if (!all) throw new Error("every account has an All group");
    const base = makeScope({ account_id: owner.account_id, user_id: owner.user_id, group_ids: [all.id] });
    const limits = makeLimits({ token_limit: { enabled: true, user_cap: 0, group_cap: 100_000 } });
    const body = { ...base, policy: { id: "pol", source_groups: [all.id], limits } };
    const hold = await held(proxyOn(consumption.nc, clock), body, clock);
    await publish(gatewayBus, eventFor(body, hold));

    await eventually(
      async () => (await get<unknown[]>("/api/agent-network/consumption", owner.token)).body.length === 2,
    );
    const { status, body: counters } = await get<ConsumptionCounter[]>(
      "/api/agent-network/consumption",
      owner.token,
    );
    expect(status).toBe(200);
    expect(counters.map((c) => [c.dimension_kind, c.dimension_id]).sort()).toEqual([
      ["group", all.id],
      ["user", owner.user_id],
    ]);
    expect(counters[0]).toMatchObject({
      window_seconds: 3600,
      tokens_input: 30,
      tokens_output: 20,
      cost_usd: 0.0005,
    });
  });
});
