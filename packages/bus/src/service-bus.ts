import type { BusService } from "@agentnet/contracts";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Tracer } from "@opentelemetry/api";
import type { Registry } from "prom-client";
import { type BusEnv, busOptionsFromEnv, connectBus } from "./connect";
import { useBusMetrics } from "./metrics";
import { useTracer } from "./trace-context";

/**
 * What a service's start gets from service-kit's `runService` that its bus connection needs, by
 * shape: the bus does not depend on service-kit (both sit on contracts only).
 */
export interface ServiceBusKit {
  lifecycle: { onStop(name: string, run: () => Promise<unknown>): void };
  tracer: Tracer | undefined;
  metrics: Registry | undefined;
}

/**
 * A service's one bus connection: joined as `service` with its environment's credentials, its
 * requests traced and measured when the kit says so, and drained on shutdown.
 */
export async function connectServiceBus(
  env: BusEnv,
  service: BusService,
  kit: ServiceBusKit,
): Promise<NatsConnection> {
  const nc = await connectBus(busOptionsFromEnv(env, service));
  useTracer(nc, kit.tracer);
  useBusMetrics(nc, kit.metrics);
  kit.lifecycle.onStop("nats", () => nc.drain());
  return nc;
}
