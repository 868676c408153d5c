import { deleteDurableConsumer, type NatsConnection, publishEvent, request } from "@agentnet/bus";
import {
  type Admission,
  answerCensus,
  applicableLimits,
  type CapsInput,
  type Hold,
  LeaseTable,
  planCounters,
} from "@agentnet/caps";
import {
  ACCOUNT_EVENTS_STREAM,
  type BudgetRule,
  type Caller,
  CONSUMPTION_CENSUS_SUBJECT,
  Consumption,
  Events,
  type GatewayRequestEvent,
  type Limits,
  type ReservedCounter,
} from "@agentnet/contracts";
import { usdToNanos } from "@agentnet/pricing";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus, connectTestMongo, makeEvent, uniqueId } from "@agentnet/testkit";
import type { Connection } from "mongoose";
import { type ConsumptionOptions, type ConsumptionService, startConsumption } from "./app";

/** A clock tests move by hand; it starts on a round hour so window arithmetic is easy to read. */
export class TestClock {
  constructor(public now = Date.UTC(2031, 0, 1, 10, 0, 0)) {}
  readonly read = () => this.now;
  advance(ms: number) {
    this.now += ms;
  }
}

type LimitsOverrides = {
  token_limit?: Partial<Limits["token_limit"]>;
  budget_limit?: Partial<Limits["budget_limit"]>;
};

/** Limits with both parts disabled unless overridden: a test turns on only what it is about. */
export const makeLimits = (overrides: LimitsOverrides = {}): Limits => ({
  token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600, ...overrides.token_limit },
  budget_limit: {
    enabled: false,
    group_cap_usd: 0,
    user_cap_usd: 0,
    window_seconds: 3600,
    ...overrides.budget_limit,
  },
});

export const makeRule = (overrides: Partial<BudgetRule> = {}): BudgetRule => ({
  id: uniqueId("rule"),
  name: "rule",
  enabled: true,
  target_groups: [],
  target_users: [],
  limits: makeLimits(),
  created_at: "2031-01-01T00:00:00Z",
  updated_at: "2031-01-01T00:00:00Z",
  ...overrides,
});

/** Who asks under which limits: a request's account, caller, policy and budget rules. */
export interface Scope extends CapsInput {
  account_id: string;
  request_id: string;
  group_ids: string[];
  policy: { id: string; source_groups: string[]; limits?: Limits };
  budget_rules: BudgetRule[];
}

/** A fresh account, user and group under a policy with no limits. */
export const makeScope = (overrides: Partial<Scope> = {}): Scope => {
  const group = overrides.group_ids?.[0] ?? uniqueId("grp");
  return {
    account_id: uniqueId("acc"),
    request_id: uniqueId("req"),
    user_id: uniqueId("usr"),
    group_ids: [group],
    policy: { id: uniqueId("pol"), source_groups: [group] },
    budget_rules: [],
    ...overrides,
  };
};

/** A fresh account under a policy with an hourly token cap per user and group. */
export const makeCapped = (user_cap: number, group_cap = 0): Scope => {
  const base = makeScope();
  const limits = makeLimits({ token_limit: { enabled: true, user_cap, group_cap, window_seconds: 3600 } });
  return { ...base, policy: { ...base.policy, limits } };
};

/**
 * One proxy's leases, asking the consumption leader over `nc` (what a gateway proxy process does).
 * `onAsk` sees every ask sent.
 */
export const proxyOn = (nc: NatsConnection, clock: TestClock, idleMs = 2_000, onAsk = () => {}) =>
  new LeaseTable(
    (ask) => {
      onAsk();
      // Generous: the machine running the suite may be busy, and a slow answer is not what is tested.
      return request(nc, Consumption.lease, ask, { timeoutMs: 25_000 });
    },
    {
      proxyId: uniqueId("proxy"),
      clock: clock.read,
      idleMs,
      outageGraceMs: 75_000,
      busAnswers: () => nc.flush(),
    },
  );

/**
 * A proxy's leases that also answer a new leader's census, as the gateway proxy's do
 * (`ConsumptionLeader.onCensus`). `stop` ends its census subscription.
 */
export function censusProxyOn(nc: NatsConnection, clock: TestClock, eventsPending = () => 0) {
  const proxyId = uniqueId("proxy");
  const table = new LeaseTable((ask) => request(nc, Consumption.lease, ask, { timeoutMs: 25_000 }), {
    proxyId,
    clock: clock.read,
    idleMs: 60_000,
    outageGraceMs: 75_000,
    busAnswers: () => nc.flush(),
  });
  const census = nc.subscribe(CONSUMPTION_CENSUS_SUBJECT, {
    callback: (error, msg) => {
      if (error) return;
      msg.respond(JSON.stringify(answerCensus(table, proxyId, eventsPending)));
    },
  });
  return { table, stop: () => census.unsubscribe() };
}

/** Admits a request of `scope` holding `tokens` (and `usd`) through the proxy's leases. */
export const admit = (table: LeaseTable, scope: Scope, clock: TestClock, tokens = 100, usd = 0.001) =>
  table.admit(scope.account_id, planCounters(scope.account_id, applicableLimits(scope), clock.now), {
    tokens,
    costNanos: usdToNanos(usd),
    calls: 0,
  });

/** Admits and returns the hold; throws when the request was refused. */
export async function held(table: LeaseTable, scope: Scope, clock: TestClock, tokens = 100): Promise<Hold> {
  const admission: Admission = await admit(table, scope, clock, tokens);
  if (admission.kind !== "held") throw new Error(`expected a hold, got ${admission.kind}`);
  return admission.hold;
}

/**
 * The event the proxy publishes for a request of `scope` that counted on `counters`: testkit's, sent
 * at the test clock's start and using 50 tokens and $0.0005, the numbers the tests count.
 */
export const eventFor = (
  scope: Scope,
  counted: { counters: ReservedCounter[] },
  overrides: Partial<GatewayRequestEvent> = {},
): GatewayRequestEvent =>
  makeEvent({
    id: scope.request_id,
    account_id: scope.account_id,
    user_id: scope.user_id,
    group_ids: scope.group_ids,
    selected_policy_id: scope.policy.id,
    reserved_counters: counted.counters,
    timestamp: new Date(new TestClock().now).toISOString(),
    input_tokens: 30,
    output_tokens: 20,
    total_tokens: 50,
    cost_usd: 0.0005,
    input_cost_usd: 0.0003,
    output_cost_usd: 0.0002,
    ...overrides,
  });

export const callerOf = (scope: Scope, role: Caller["role"] = "owner"): Caller => ({
  account_id: scope.account_id,
  user_id: scope.user_id,
  role,
  group_ids: scope.group_ids,
  email: "u@example.com",
  name: "u",
});

/** The connections of the replicas running on each durable consumer: the last one to stop deletes it. */
const replicasOnDurable = new Map<string, Set<NatsConnection>>();

/**
 * One consumption replica on its own NATS connection, over a database of its own per test file
 * (`database`): the expiry sweep works on every account, so files with different clocks must not
 * share leases. Timers are off; tests call `sweepExpired()` and `prune()`.
 */
export async function startReplica(database: string, clock: TestClock, options: Partial<ConsumptionOptions>) {
  const nc = await connectTestBus("consumption-test");
  const base = await connectTestMongo();
  const connection: Connection = base.useDb(database, { useCache: false });
  const service: ConsumptionService = await startConsumption({
    nc,
    connection,
    logger: createLogger("consumption-test", "silent"),
    options: { sweepIntervalMs: 0, pruneIntervalMs: 0, deliverNew: true, clock: clock.read, ...options },
  });
  const durable = options.durable ?? "consumption";
  const onDurable = replicasOnDurable.get(durable) ?? new Set<NatsConnection>();
  replicasOnDurable.set(durable, onDurable.add(nc));
  return {
    nc,
    service,
    connection,
    async stop() {
      await service.stop();
      onDurable.delete(nc);
      if (!nc.isClosed()) {
        // Test durables are unique per file; leaving them would keep every test event in the stream.
        // Not while another replica uses it: a standby that took over would lose its consumer.
        if (onDurable.size === 0) {
          await deleteDurableConsumer(nc, durable).catch(() => undefined);
          await deleteDurableConsumer(nc, `${durable}-accounts`, ACCOUNT_EVENTS_STREAM).catch(
            () => undefined,
          );
        }
        await nc.drain();
      }
      await base.close();
    },
    /** Dies without a word: no snapshot, no lease hand-over, unacked events stay unacked. */
    crash: () => {
      onDurable.delete(nc);
      return nc.close();
    },
  };
}

export type Replica = Awaited<ReturnType<typeof startReplica>>;

export const publish = (nc: NatsConnection, event: GatewayRequestEvent, msgId = event.id) =>
  publishEvent(nc, Events.requests(event.account_id), event, msgId);
