import { type Handler, type NatsConnection, serve } from "@agentnet/bus";
import { type Endpoint, Events, QUEUE } from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { Models } from "../store/models";

/** What every handler group needs: the stores, the bus and a logger. */
export interface HandlerContext {
  models: Models;
  nc: NatsConnection;
  logger: Logger;
}

/** Tells proxies and caches that an account's configuration changed. */
export const announceConfigChange = (ctx: HandlerContext, accountId: string): void => {
  ctx.nc.publish(
    Events.configChanged(accountId),
    JSON.stringify({ v: 1, account_id: accountId, at: new Date().toISOString() }),
  );
};

/** Serves one control-plane endpoint in the service's queue group, logging unexpected failures. */
export const handle = <E extends Endpoint>(ctx: HandlerContext, endpoint: E, handler: Handler<E>): void => {
  serve(ctx.nc, endpoint, handler, {
    queue: QUEUE.controlPlane,
    onUnexpectedError: (err, subject) => ctx.logger.error({ err, subject }, "handler failed"),
  });
};
