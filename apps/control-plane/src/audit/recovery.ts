import type { HandlerContext } from "../handlers/context";
import { loadTarget } from "./changes";

/** How often entries past their retention are dropped. */
const PRUNE_EVERY_MS = 3_600_000;

export interface AuditRecoveryOptions {
  /**
   * How old an intent without its entry is before recovery writes the entry: longer than any change
   * takes, so a change still being made on another replica is not taken for a stopped one.
   */
  afterMs: number;
  /** How often this replica looks. */
  everyMs: number;
}

/**
 * Writes the entries of changes whose process stopped between storing them and appending their
 * entry (src/audit/journal.ts `recover`), at start and then every `everyMs`; drops entries past
 * their account's retention at start and then hourly.
 */
export function startAuditRecovery(ctx: HandlerContext, options: AuditRecoveryOptions): { stop(): void } {
  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const recovered = await ctx.audit.recover(options.afterMs, (accountId, target) =>
        loadTarget(ctx, accountId, target),
      );
      if (recovered > 0) ctx.logger.warn({ recovered }, "audit entries of interrupted changes written");
    } catch (error) {
      ctx.logger.warn({ err: error }, "audit recovery failed; tried again later");
    } finally {
      sweeping = false;
    }
  };
  const prune = async () => {
    try {
      const dropped = await ctx.audit.prune();
      if (dropped > 0) ctx.logger.info({ dropped }, "audit entries past their retention dropped");
    } catch (error) {
      ctx.logger.warn(
        { err: error },
        "dropping audit entries past their retention failed; tried again later",
      );
    }
  };
  void sweep();
  void prune();
  const timers = [
    setInterval(() => void sweep(), options.everyMs),
    setInterval(() => void prune(), PRUNE_EVERY_MS),
  ];
  for (const timer of timers) timer.unref();
  return { stop: () => timers.forEach(clearInterval) };
}
