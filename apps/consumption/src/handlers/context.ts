import { type Handler, type NatsConnection, serve } from "@agentnet/bus";
import { type Endpoint, QUEUE } from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { Ledger } from "../store/ledger";
import type { Models } from "../store/models";
import type { Reservations } from "../store/reservations";

/** What every handler needs: the stores, the bus, a logger and the clock. */
export interface HandlerContext {
  nc: NatsConnection;
  logger: Logger;
  models: Models;
  ledger: Ledger;
  reservations: Reservations;
  clock: () => number;
}

/** Serves one endpoint in the consumption queue group: each request reaches one replica. */
export const handle = <E extends Endpoint>(ctx: HandlerContext, endpoint: E, handler: Handler<E>): void => {
  serve(ctx.nc, endpoint, handler, {
    queue: QUEUE.consumption,
    onUnexpectedError: (err, subject) => ctx.logger.error({ err, subject }, "handler failed"),
  });
};
