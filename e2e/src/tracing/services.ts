import { type NatsConnection, useTracer } from "@agentnet/bus";
import { startTracing, type Tracing } from "@agentnet/service-kit/tracing";

/**
 * The stack's services traced as their own processes would be: each under its own `service.name`,
 * its tracer on its bus connection, all exporting to one collector.
 */
export class StackTracing {
  private readonly services = new Map<string, Tracing>();

  constructor(private readonly url: string) {}

  /** Traces `nc` as the connection of `service`. */
  use(nc: NatsConnection, service: string): NatsConnection {
    let tracing = this.services.get(service);
    if (!tracing) {
      tracing = startTracing(service, { url: this.url, sampler: "parentbased_always_on", ratio: 1 });
      this.services.set(service, tracing);
    }
    useTracer(nc, tracing.tracer);
    return nc;
  }

  /** Exports every span ended so far. */
  async flush(): Promise<void> {
    await Promise.all([...this.services.values()].map((tracing) => tracing.flush()));
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.services.values()].map((tracing) => tracing.shutdown()));
  }
}
