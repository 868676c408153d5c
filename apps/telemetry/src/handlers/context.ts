import type { NatsConnection } from "@agentnet/bus";
import type { Warehouse } from "@agentnet/clickhouse";
import type { Logger } from "@agentnet/service-kit";
import type { TelemetryMetrics } from "../metrics";

/** What every telemetry handler needs. */
export interface TelemetryContext {
  nc: NatsConnection;
  warehouse: Warehouse;
  logger: Logger;
  /** Per-request timeout of the calls telemetry makes to the control-plane. */
  requestTimeoutMs: number;
  /** Undefined with metrics off. */
  metrics?: TelemetryMetrics;
}
