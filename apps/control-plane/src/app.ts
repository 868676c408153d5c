import type { NatsConnection } from "@agentnet/bus";
import type { Logger } from "@agentnet/service-kit";
import type { Connection } from "mongoose";
import { registerAccountHandlers } from "./handlers/accounts";
import type { HandlerContext } from "./handlers/context";
import { registerGroupHandlers } from "./handlers/groups";
import { registerIdentityHandlers } from "./handlers/identity";
import { registerTokenHandlers } from "./handlers/tokens";
import { registerUserHandlers } from "./handlers/users";
import { createModels } from "./store/models";

/** Wires every control-plane endpoint onto a bus connection and a MongoDB connection. */
export async function startControlPlane(deps: {
  nc: NatsConnection;
  connection: Connection;
  logger: Logger;
}) {
  const ctx: HandlerContext = {
    nc: deps.nc,
    logger: deps.logger,
    models: await createModels(deps.connection),
  };
  registerIdentityHandlers(ctx);
  registerAccountHandlers(ctx);
  registerUserHandlers(ctx);
  registerGroupHandlers(ctx);
  registerTokenHandlers(ctx);
  // A flush makes sure the server has every subscription before anyone sends a request.
  await deps.nc.flush();
  return ctx;
}
