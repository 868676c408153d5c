import { ensureRequestStream, type NatsConnection } from "@agentnet/bus";
import type { Logger } from "@agentnet/service-kit";
import type { Connection } from "mongoose";
import { followAccountDeletions } from "./handlers/accounts";
import type { HandlerContext } from "./handlers/context";
import { registerListHandler } from "./handlers/list";
import { registerReserveHandler } from "./handlers/reserve";
import { settleEvents, startSettlement } from "./handlers/settlement";
import { Ledger } from "./store/ledger";
import { prune, type RetentionOptions } from "./store/maintenance";
import { createModels } from "./store/models";
import { Reservations } from "./store/reservations";

export interface ConsumptionOptions extends RetentionOptions {
  /** How long a reservation holds its estimate when no event settles it. */
  reservationTtlMs: number;
  /** How often expired reservations are freed; 0 leaves it to `sweepExpired()` (tests). */
  sweepIntervalMs: number;
  /** How often ended counters, old ledger entries and ended reservations are pruned; 0 disables. */
  pruneIntervalMs: number;
  /** Durable consumer name on the request stream (and `<name>-accounts` on account events); every replica uses the same. */
  durable: string;
  deliverNew: boolean;
  ackWaitMs: number;
  /** Milliseconds since the epoch; injectable so tests roll windows over without waiting. */
  clock: () => number;
}

const DAY_MS = 24 * 3600 * 1000;

export const defaultOptions: ConsumptionOptions = {
  reservationTtlMs: 10 * 60 * 1000,
  sweepIntervalMs: 15_000,
  pruneIntervalMs: 3600 * 1000,
  counterRetentionMs: 7 * DAY_MS,
  ledgerCompactionMs: 3600 * 1000,
  reservationRetentionMs: DAY_MS,
  durable: "consumption",
  deliverNew: false,
  ackWaitMs: 30_000,
  clock: Date.now,
};

/** Wires the consumption endpoints, the settlement consumer and the sweeps onto NATS and MongoDB. */
export async function startConsumption(deps: {
  nc: NatsConnection;
  connection: Connection;
  logger: Logger;
  options?: Partial<ConsumptionOptions>;
}) {
  const options = { ...defaultOptions, ...deps.options };
  const models = await createModels(deps.connection);
  const ledger = new Ledger(models, options.clock);
  const reservations = new Reservations(models, ledger, options.clock, options.reservationTtlMs);
  const ctx: HandlerContext = { ...deps, models, ledger, reservations, clock: options.clock };

  registerReserveHandler(ctx);
  registerListHandler(ctx);

  await ensureRequestStream(deps.nc);
  const abort = new AbortController();
  const loops = [
    (await startSettlement(ctx, options, abort.signal)).loop,
    (await followAccountDeletions(ctx, options, abort.signal)).loop,
  ].map((loop) =>
    loop.catch((err: unknown) => {
      if (!abort.signal.aborted) deps.logger.error({ err }, "a JetStream consumer stopped");
    }),
  );

  const sweepExpired = () => reservations.sweepExpired();
  const pruneNow = () => prune(models, ledger, options.clock(), options);
  const timers = [
    every(options.sweepIntervalMs, sweepExpired, deps.logger, "expiry sweep"),
    every(options.pruneIntervalMs, pruneNow, deps.logger, "prune"),
  ];
  // A flush makes sure the server has every subscription before anyone sends a request.
  await deps.nc.flush();

  return {
    models,
    reservations,
    sweepExpired,
    prune: pruneNow,
    settleEvents: (events: Parameters<typeof settleEvents>[1]) => settleEvents(ctx, events),
    /** Stops timers and the consumer loop (after its batch in hand); the caller drains NATS. */
    async stop() {
      for (const timer of timers) if (timer) clearInterval(timer);
      abort.abort();
      await Promise.all(loops);
    },
  };
}

export type ConsumptionService = Awaited<ReturnType<typeof startConsumption>>;

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
