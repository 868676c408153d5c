import {
  DEFAULT_REQUEST_STREAM_LIMITS,
  ensureRequestStream,
  type NatsConnection,
  type RequestStreamLimits,
} from "@agentnet/bus";
import { MIGRATIONS_DIR, runMigrations, type Warehouse } from "@agentnet/clickhouse";
import { Events } from "@agentnet/contracts";
import type { Logger, MetricsRegistry } from "@agentnet/service-kit";
import { followAccountDeletions } from "./handlers/accounts";
import type { TelemetryContext } from "./handlers/context";
import { startIngest } from "./handlers/ingest";
import { registerReadHandlers } from "./handlers/reads";
import { scheduleRetention, sweepRetention } from "./handlers/retention";
import { scheduleRollup } from "./handlers/rollup";
import { createSettingsReader } from "./handlers/settings";
import { serveStoredRequests } from "./handlers/stored-requests";
import { TelemetryMetrics, timeQueriesOn } from "./metrics";
import { rollHours } from "./store/rollup";

/** Exported for tests that start a late follower of account deletions next to a running service. */
export { followAccountDeletions };

export interface TelemetryOptions {
  /** Durable consumer name; every replica shares it ("telemetry"), tests use their own. */
  durable: string;
  /** Narrows the consumer to some accounts' subjects (tests); defaults to every account. */
  filterSubject?: string;
  deliver: "all" | "new";
  inactiveThresholdMs?: number;
  /** Unacked longer than this, a message is redelivered: well above a batch write's duration. */
  ackWaitMs: number;
  /** Unacked messages in flight; bounds memory together with the batch size. */
  maxAckPending: number;
  batchSize: number;
  flushIntervalMs: number;
  /** 0 disables the periodic sweep (tests call `sweepRetention` themselves). */
  retentionIntervalMs: number;
  /** How often usage and log counts are rolled into hours; 0 disables it (tests call `rollHours`). */
  rollupIntervalMs: number;
  settingsCacheMs: number;
  requestTimeoutMs: number;
  /** The request stream's limits (every service ensuring the stream must agree on them). */
  requestStream: RequestStreamLimits;
}

export const DEFAULT_TELEMETRY_OPTIONS: TelemetryOptions = {
  requestStream: DEFAULT_REQUEST_STREAM_LIMITS,
  durable: "telemetry",
  deliver: "all",
  ackWaitMs: 30_000,
  // Two batches in flight (one writing, one filling) plus the pull buffer; ~2 KiB an event.
  maxAckPending: 30_000,
  batchSize: 10_000,
  flushIntervalMs: 250,
  retentionIntervalMs: 3_600_000,
  rollupIntervalMs: 60_000,
  settingsCacheMs: 5_000,
  requestTimeoutMs: 5_000,
};

/**
 * Applies the ClickHouse migrations, serves the telemetry reads, follows account deletions,
 * starts consuming request events and rolls usage into hours. Everything a test needs runs
 * in-process from here.
 */
export async function startTelemetry(deps: {
  nc: NatsConnection;
  warehouse: Warehouse;
  logger: Logger;
  /** The service's metrics registry; undefined counts nothing. */
  metrics?: MetricsRegistry | undefined;
  options?: Partial<TelemetryOptions>;
}) {
  const options = { ...DEFAULT_TELEMETRY_OPTIONS, ...deps.options };
  const metrics = deps.metrics ? new TelemetryMetrics(deps.metrics) : undefined;
  timeQueriesOn(deps.warehouse, metrics);
  const ctx: TelemetryContext = {
    nc: deps.nc,
    warehouse: deps.warehouse,
    logger: deps.logger,
    requestTimeoutMs: options.requestTimeoutMs,
    metrics,
  };
  const applied = await runMigrations(deps.warehouse, MIGRATIONS_DIR);
  if (applied.length > 0) ctx.logger.info({ migrations: applied.map((m) => m.name) }, "migrations applied");

  registerReadHandlers(ctx, createSettingsReader(ctx, options.settingsCacheMs));
  serveStoredRequests(ctx, options.durable);
  const deletions = await followAccountDeletions(ctx, `${options.durable}-account-deletions`);
  await ensureRequestStream(deps.nc, [Events.requestsAll], options.requestStream);
  const ingest = await startIngest(ctx, options);
  metrics?.followBacklog(ingest.backlog);
  const stopRetention =
    options.retentionIntervalMs > 0 ? scheduleRetention(ctx, options.retentionIntervalMs) : () => {};
  const stopRollup =
    options.rollupIntervalMs > 0 ? scheduleRollup(ctx, options.rollupIntervalMs) : async () => {};
  // Every subscription is on the server before anyone is told telemetry is ready.
  await deps.nc.flush();

  return {
    /** Writes what the ingest has buffered (rows become queryable once it resolves). */
    flushIngest: ingest.flush,
    sweepRetention: (now?: Date) => sweepRetention(ctx, now),
    rollHours: (now?: Date) => rollHours(ctx.warehouse, now),
    /** Stops consuming and flushes; the caller drains NATS and closes the warehouse. */
    async stop() {
      stopRetention();
      await deletions.stop();
      await ingest.stop();
      await stopRollup();
    },
  };
}
export type TelemetryService = Awaited<ReturnType<typeof startTelemetry>>;
