import { connect, type NatsConnection } from "@nats-io/transport-node";

export interface BusOptions {
  url: string;
  /** Shown in the server's connection list: the service name. */
  name: string;
}

/** Connects and keeps reconnecting forever: a service outlives a NATS restart. */
export function connectBus(options: BusOptions): Promise<NatsConnection> {
  return connect({
    servers: options.url,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
  });
}
