import { hostname } from "node:os";
import {
  contendForLeadership,
  DEFAULT_REQUEST_STREAM_LIMITS,
  ensureRequestStream,
  type Leadership,
  type NatsConnection,
  type RequestStreamLimits,
} from "@agentnet/bus";
import {
  CONSUMPTION_LEADER_SUBJECT,
  type ConsumptionLeaderAnnouncement,
  type GatewayRequestEvent,
  leaseSubjectOfTerm,
} from "@agentnet/contracts";
import { type Logger, type MetricsRegistry, MONGO_CONSISTENCY, newId } from "@agentnet/service-kit";
import type { Connection } from "mongoose";
import { BudgetAlerts, defaultBudgetAlertOptions } from "./alerts/budget-alerts";
import { AdmissionWatch } from "./domain/admissions";
import { followAccountDeletions } from "./handlers/accounts";
import { followAdmissions } from "./handlers/admissions";
import { registerCapsHandler } from "./handlers/caps";
import { takeCensus } from "./handlers/census";
import type { HandlerContext } from "./handlers/context";
import { registerLeaseHandlers } from "./handlers/lease";
import { registerListHandler } from "./handlers/list";
import { startSettlement } from "./handlers/settlement";
import { UsageKeeper } from "./keeper";
import { ConsumptionMetrics } from "./metrics";
import { JournalFencedError, UsageStore } from "./store/usage-store";

/**
 * How consumption connects to MongoDB: majority writes and reads from the primary
 * (`MONGO_CONSISTENCY`), so a settled batch's journal entry survives a failover and a new leader
 * reads every entry its predecessor acknowledged.
 */
export const MONGO_CONNECTION_OPTIONS = { ...MONGO_CONSISTENCY, serverSelectionTimeoutMS: 10_000 } as const;

export interface ConsumptionOptions {
  /** How long a lease of cap headroom lasts unless its proxy renews it. */
  quotaLeaseTtlMs: number;
  /** How often expired leases are ended; 0 leaves it to `sweepExpired()` (tests). */
  sweepIntervalMs: number;
  /** How often changed counters are snapshotted and the journal trimmed; 0 leaves it to `stop()`. */
  snapshotIntervalMs: number;
  /** How often counters of long-ended windows are pruned; 0 disables. */
  pruneIntervalMs: number;
  /** Counters stay listed this long after their window ended. */
  counterRetentionMs: number;
  /** Durable consumer name on the request stream (and `<name>-accounts`), and the lease key; every replica uses the same. */
  durable: string;
  deliverNew: boolean;
  ackWaitMs: number;
  /**
   * How long a failed leader's lease outlives it before a standby takes over; undefined: 6 s on one
   * NATS server, 20 s on a cluster (long enough to ride out the lease bucket's own leader election).
   */
  leaseTtlMs: number | undefined;
  /** Milliseconds since the epoch; injectable so tests roll windows over without waiting. */
  clock: () => number;
  /** The request stream's limits (every service ensuring the stream must agree on them). */
  requestStream: RequestStreamLimits;
  /**
   * A proxy silent this long (no heartbeat, no admission) is taken for dead: the admission events
   * of its unfinished requests are published in their place. Three of the proxy's heartbeats.
   */
  admissionOrphanMs: number;
  /** How often the leader looks for such proxies. */
  admissionSweepMs: number;
  /** How long every lease is held when NATS is lost (proxies keep using theirs that long). */
  leaseOutageGraceMs: number;
  /** How often the leader compares the caps of the callers it settled with their accounts' alert thresholds. */
  alertIntervalMs: number;
}

/** Pending admissions kept at most (about the requests in flight across every proxy). */
const MAX_PENDING_ADMISSIONS = 200_000;

const DAY_MS = 24 * 3600 * 1000;

export const defaultOptions: ConsumptionOptions = {
  quotaLeaseTtlMs: 6_000,
  sweepIntervalMs: 1_000,
  snapshotIntervalMs: 5_000,
  pruneIntervalMs: 3600 * 1000,
  counterRetentionMs: 7 * DAY_MS,
  durable: "consumption",
  deliverNew: false,
  // Short: a new leader waits it out when its predecessor died holding fetched, unacked events
  // (`awaitRedelivery`), and capped requests are 503 meanwhile. A batch takes milliseconds to
  // journal; one that outlasts it is redelivered after it is journaled and recognised by its ids.
  ackWaitMs: 10_000,
  leaseTtlMs: undefined,
  requestStream: DEFAULT_REQUEST_STREAM_LIMITS,
  admissionOrphanMs: 30_000,
  admissionSweepMs: 1_000,
  leaseOutageGraceMs: 75_000,
  alertIntervalMs: defaultBudgetAlertOptions.intervalMs,
  clock: Date.now,
};

/**
 * Wires consumption onto NATS and MongoDB. Replicas contend for one leadership lease; the leader
 * loads the counters into memory, grants proxies leases of cap headroom, answers list, settles
 * events and runs the sweeps; the others stand by and take over when it stops or its lease runs
 * out. One decider is what makes grants atomic across replicas without a database round trip per
 * grant (see docs/ARCHITECTURE.md, "Caps").
 */
export async function startConsumption(deps: {
  nc: NatsConnection;
  connection: Connection;
  logger: Logger;
  /** The service's metrics registry; undefined counts nothing. */
  metrics?: MetricsRegistry | undefined;
  options?: Partial<ConsumptionOptions>;
}) {
  const options = { ...defaultOptions, ...deps.options };
  const metrics = deps.metrics ? new ConsumptionMetrics(deps.metrics) : undefined;
  const store = await UsageStore.open(deps.connection);
  await ensureRequestStream(deps.nc, undefined, options.requestStream);
  let term: Term | undefined;
  /** What a term lost to a NATS outage leaves, to resume with if this replica leads again first. */
  let dormant: TermState | undefined;
  let dormantSince = 0;
  let leadership: Leadership | undefined;

  leadership = await contendForLeadership(deps.nc, {
    key: options.durable,
    holder: `${hostname()}-${process.pid}-${newId()}`,
    ttlMs: options.leaseTtlMs,
    onElected: async () => {
      const resumed = dormant && (await dormant.keeper.stillOwnsTerm()) ? dormant : undefined;
      dormant = undefined;
      term = await lead({ ...deps, metrics }, store, options, () => void leadership?.stepDown(), resumed);
      deps.logger.info(resumed ? "leading consumption again, state kept" : "leading consumption");
    },
    onDeposed: async (reason) => {
      const ending = term;
      term = undefined;
      // Kept before stopping: an outage reported meanwhile must still hold its leases.
      if (reason === "lost" && ending) {
        dormant = ending.state;
        dormantSince = options.clock();
      }
      await ending?.stop(reason === "released");
      deps.logger.info({ reason }, "no longer leading consumption");
    },
    onError: (err) => deps.logger.warn({ err }, "consumption lease"),
  });

  // A silent NATS is declared lost a few seconds in (`connectBus`), and renewing the leadership
  // may have failed first: a term lost that recently holds its leases all the same (after a lease
  // TTL it has none left that a proxy could be using).
  const holdingLeases = () =>
    term?.state ??
    (dormant && options.clock() - dormantSince < options.quotaLeaseTtlMs ? dormant : undefined);
  void (async () => {
    for await (const status of deps.nc.status()) {
      if (status.type === "disconnect") {
        holdingLeases()
          ?.keeper.busLost()
          .catch((err: unknown) =>
            deps.logger.error({ err }, "cannot record the lease horizon of a NATS outage"),
          );
      }
    }
  })().catch(() => undefined);

  const leading = (): Term => {
    if (!term) throw new Error("this consumption replica is not leading");
    return term;
  };
  return {
    isLeader: () => term !== undefined,
    sweepExpired: () => leading().sweepExpired(),
    snapshot: () => leading().state.keeper.snapshot(),
    prune: () => leading().state.keeper.prune(),
    settleEvents: (events: GatewayRequestEvent[]) => leading().state.keeper.settle(events),
    /** Hands the lease over (after saving a snapshot) and stops; the caller drains NATS. */
    stop: () => leadership?.release(),
  };
}

export type ConsumptionService = Awaited<ReturnType<typeof startConsumption>>;

/** A term's state in memory: the counter book and the admissions of unfinished requests. */
interface TermState {
  keeper: UsageKeeper;
  admissions: AdmissionWatch;
}

interface Term {
  state: TermState;
  /** Ends the leases that ran out, as the term's sweep does every `sweepIntervalMs`. */
  sweepExpired(): Promise<number>;
  /** Stops serving; `save` writes a last snapshot (a graceful hand-over, not a lost lease). */
  stop(save: boolean): Promise<void>;
}

/** How often the leader says where its lease endpoint answers (proxies drop a silent leader after 3 s). */
const LEADER_ANNOUNCE_INTERVAL_MS = 1_000;

/**
 * One leadership term: load (or resume the state a term lost to a NATS outage left), subscribe,
 * consume, sweep, announce; `stop` undoes it all.
 */
async function lead(
  deps: { nc: NatsConnection; logger: Logger; metrics: ConsumptionMetrics | undefined },
  store: UsageStore,
  options: ConsumptionOptions,
  stepDown: () => void,
  resumed: TermState | undefined,
): Promise<Term> {
  const keeper =
    resumed?.keeper ??
    (await UsageKeeper.load(store, {
      quotaLeaseTtlMs: options.quotaLeaseTtlMs,
      leaseOutageGraceMs: options.leaseOutageGraceMs,
      durable: options.durable,
      counterRetentionMs: options.counterRetentionMs,
      // JetStream redelivers an unacked event after ack_wait (a few of those cover a slow
      // hand-over); a proxy retries an event whose ack it lost within the stream's dedup window.
      redeliveryHorizonMs: Math.max(4 * options.ackWaitMs, options.requestStream.duplicateWindowMs),
      clock: options.clock,
      busAnswers: () => deps.nc.flush(),
    }));
  if (resumed) keeper.resumed();
  const admissions =
    resumed?.admissions ??
    new AdmissionWatch({ orphanAfterMs: options.admissionOrphanMs, maxPending: MAX_PENDING_ADMISSIONS });
  const alerts = new BudgetAlerts({
    nc: deps.nc,
    logger: deps.logger,
    counters: keeper,
    options: { ...defaultBudgetAlertOptions, intervalMs: options.alertIntervalMs, clock: options.clock },
  });
  alerts.start();
  const ctx: HandlerContext = { ...deps, keeper, admissions, alerts };
  const abort = new AbortController();
  const onError = (err: unknown) => {
    if (err instanceof JournalFencedError) {
      deps.logger.error({ err }, "another replica is writing the journal; stepping down");
      stepDown();
    } else {
      deps.logger.error({ err }, "settling a batch failed; it will be redelivered");
    }
  };
  const settlement = await startSettlement(
    ctx,
    { ...options, takingOver: resumed === undefined, onError },
    abort.signal,
  );
  const sweepExpired = () => keeper.sweepExpired(settlement.settledThrough);
  const loops = [settlement.loop, followAccountDeletions(ctx, options, abort.signal)].map((loop) =>
    loop.catch((err: unknown) => {
      if (!abort.signal.aborted) deps.logger.error({ err }, "a JetStream consumer stopped");
    }),
  );
  const timers = [
    every(options.sweepIntervalMs, sweepExpired, deps.logger, "expiry sweep"),
    every(options.snapshotIntervalMs, () => keeper.snapshot(), deps.logger, "snapshot"),
    every(options.pruneIntervalMs, () => keeper.prune(), deps.logger, "prune"),
  ];
  const stopFollowingAdmissions = followAdmissions(
    { ...deps, watch: admissions, clock: options.clock },
    options.admissionSweepMs,
  );
  const term = newId();
  const announce = (reclaim?: string[]) => {
    const announcement: ConsumptionLeaderAnnouncement = {
      v: 1,
      lease_subject: leaseSubjectOfTerm(term),
      at: new Date().toISOString(),
      ...(reclaim ? { reclaim } : {}),
    };
    if (!deps.nc.isClosed()) deps.nc.publish(CONSUMPTION_LEADER_SUBJECT, JSON.stringify(announcement));
  };
  const subscriptions = [
    ...registerLeaseHandlers(ctx, term, announce),
    registerListHandler(ctx),
    registerCapsHandler(ctx),
  ];
  // A flush makes sure the server has every subscription before anyone sends a request.
  await deps.nc.flush();
  announce();
  const announcer = setInterval(() => announce(), LEADER_ANNOUNCE_INTERVAL_MS);
  // A resumed term takes it too: it may have lost NATS mid-census, or recorded an outage since.
  loops.push(
    takeCensus(
      { ...deps, keeper, clock: options.clock, settledThroughNow: settlement.settledThroughNow },
      leaseSubjectOfTerm(term),
      abort.signal,
    ).catch((err: unknown) => deps.logger.error({ err }, "census of lease holders failed")),
  );
  return {
    state: { keeper, admissions },
    sweepExpired,
    async stop(save) {
      clearInterval(announcer);
      stopFollowingAdmissions();
      await alerts.stop();
      for (const subscription of subscriptions) subscription.unsubscribe();
      for (const timer of timers) if (timer) clearInterval(timer);
      abort.abort();
      await Promise.all(loops);
      if (save)
        await keeper.snapshot().catch((err: unknown) => deps.logger.error({ err }, "last snapshot failed"));
    },
  };
}

/** Runs `task` every `ms` (never two at once); 0 means not at all. */
function every(ms: number, task: () => Promise<unknown>, logger: Logger, name: string) {
  if (ms <= 0) return undefined;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    task()
      .catch((err: unknown) => logger.error({ err }, `${name} failed`))
      .finally(() => {
        running = false;
      });
  }, ms);
  timer.unref();
  return timer;
}
