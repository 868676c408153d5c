import { request } from "@agentnet/bus";
import { ControlPlane } from "@agentnet/contracts";
import { planRetention, type RetentionPlan, sweepHorizon } from "../domain/retention";
import {
  deleteAccessLogsBefore,
  deleteSessionsEndedBefore,
  dropPartition,
  listOldPartitions,
} from "../store/retention";
import type { TelemetryContext } from "./context";

/**
 * One retention sweep over access_logs (usage is kept). The control-plane lists each account's
 * access_log_retention_days; if it cannot answer, nothing is deleted this time.
 */
export async function sweepRetention(ctx: TelemetryContext, now = new Date()): Promise<RetentionPlan> {
  const listed = await request(ctx.nc, ControlPlane.retentionList, {}, { timeoutMs: ctx.requestTimeoutMs });
  const retention = new Map(listed.map((row) => [row.account_id, row.access_log_retention_days]));
  const before = sweepHorizon(retention, now);
  if (before === undefined) return { dropPartitions: [], deletes: [], sessions: [] };
  const plan = planRetention(await listOldPartitions(ctx.warehouse, before), retention, now);
  for (const partition of plan.dropPartitions) await dropPartition(ctx.warehouse, partition);
  for (const { account_id, before: cutoff } of plan.deletes) {
    await deleteAccessLogsBefore(ctx.warehouse, account_id, cutoff);
  }
  for (const { account_id, before: cutoff } of plan.sessions) {
    await deleteSessionsEndedBefore(ctx.warehouse, account_id, cutoff);
  }
  if (plan.dropPartitions.length > 0 || plan.deletes.length > 0) {
    ctx.logger.info(
      { dropped_partitions: plan.dropPartitions, accounts_trimmed: plan.deletes.length },
      "access-log retention swept",
    );
  }
  return plan;
}

/** Sweeps every `intervalMs` (and once at start); returns the stop function. */
export function scheduleRetention(ctx: TelemetryContext, intervalMs: number): () => void {
  const run = () =>
    sweepRetention(ctx).catch((err: unknown) =>
      ctx.logger.warn({ err }, "retention sweep failed; will retry"),
    );
  const first = setTimeout(run, 5_000);
  const timer = setInterval(run, intervalMs);
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
