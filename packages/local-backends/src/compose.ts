import { BUS_SERVICES } from "@agentnet/contracts";
import { composePasswordVariable, natsServerConfig } from "./nats-auth";

/**
 * infra/nats/nats-server.conf, the compose file's NATS configuration: the same users and
 * permissions as every other stack, passwords read from the container's environment.
 */
export const composeNatsConfig = () =>
  natsServerConfig({
    host: "0.0.0.0",
    port: 4222,
    storeDir: "/data",
    monitorPort: 8222,
    passwords: Object.fromEntries(
      BUS_SERVICES.map((service) => [service, { env: composePasswordVariable(service) }]),
    ) as Parameters<typeof natsServerConfig>[0]["passwords"],
  });
