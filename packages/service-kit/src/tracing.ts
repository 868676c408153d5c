import { context, DiagLogLevel, diag, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { newId } from "./ids";
import type { Logger } from "./logger";
import type { TracingSettings } from "./tracing-env";

/** One service's tracer, and how to send what it still holds when the service stops. */
export interface Tracing {
  tracer: Tracer;
  /** Exports every span ended so far (tests read them at once). */
  flush(): Promise<void>;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

let contextManaged = false;

/**
 * Starts exporting one service's spans over OTLP/HTTP (JSON), in batches off the request path.
 * Each call has its own provider, so services sharing a process (the e2e stack) still carry their
 * own `service.name`; none is registered globally, a service's tracer travels with its bus
 * connection (`useTracer` in @agentnet/bus). The context manager is process-wide: it only carries
 * the active span, whichever service's it is. Loaded only when tracing is on (`runService`).
 */
export function startTracing(serviceName: string, settings: TracingSettings, logger?: Logger): Tracing {
  if (!contextManaged) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManaged = true;
  }
  // Export failures (a collector down) surface through OpenTelemetry's diagnostics, silent unless set.
  if (logger) diag.setLogger(diagnosticsTo(logger), DiagLogLevel.WARN);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": settings.serviceName ?? serviceName,
      "service.namespace": "agentnet",
      "service.instance.id": newId(),
    }),
    sampler: samplerOf(settings),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: settings.url }) })],
  });
  return {
    tracer: provider.getTracer("agentnet"),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

function samplerOf({ sampler, ratio }: TracingSettings): Sampler {
  switch (sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

function diagnosticsTo(logger: Logger) {
  const warn = (message: string, ...args: unknown[]) => logger.warn({ otel: args }, message);
  const ignore = () => undefined;
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}
