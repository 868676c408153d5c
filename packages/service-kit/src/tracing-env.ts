import { z } from "zod";

/** `NAME=` in an env file leaves a variable empty: that is unset, not a value to validate. */
const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" });

const blankIsUnset = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (typeof value === "string" && value.trim() === "" ? undefined : value), schema);

export const TracesSampler = z.enum([
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
]);
export type TracesSampler = z.infer<typeof TracesSampler>;

/**
 * OpenTelemetry's standard variables for traces (docs/ARCHITECTURE.md, "Tracing"). Tracing is off
 * unless an endpoint is set. The OTLP exporter itself also reads its standard
 * `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`, `_TIMEOUT`, `_COMPRESSION` and certificate variables.
 */
export const tracingEnv = {
  /** A collector's OTLP/HTTP base URL; traces go to `<it>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: blankIsUnset(httpUrl.optional()),
  /** The whole URL traces are posted to; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: blankIsUnset(httpUrl.optional()),
  /** Unset: the service's own name (api-gateway, gateway-proxy, ...). */
  OTEL_SERVICE_NAME: blankIsUnset(z.string().trim().optional()),
  OTEL_TRACES_SAMPLER: blankIsUnset(
    z.string().trim().toLowerCase().pipe(TracesSampler).default("parentbased_always_on"),
  ),
  /** The ratio of the `traceidratio` samplers, 0 to 1 (default 1). */
  OTEL_TRACES_SAMPLER_ARG: blankIsUnset(z.coerce.number().min(0).max(1).optional()),
  /** `true` turns tracing off whatever else is set. */
  OTEL_SDK_DISABLED: blankIsUnset(
    z
      .enum(["true", "false"])
      .default("false")
      .transform((value) => value === "true"),
  ),
};

export interface TracingEnv {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  OTEL_SERVICE_NAME?: string | undefined;
  OTEL_TRACES_SAMPLER: TracesSampler;
  OTEL_TRACES_SAMPLER_ARG?: number | undefined;
  OTEL_SDK_DISABLED: boolean;
}

/** Where and how a service exports its spans (`startTracing`). */
export interface TracingSettings {
  /** The OTLP/HTTP URL spans are posted to, as JSON. */
  url: string;
  /** Overrides the service's own name. */
  serviceName?: string;
  sampler: TracesSampler;
  /** The share of new traces the ratio samplers keep. */
  ratio: number;
}

/** The tracing the environment asks for, or undefined when tracing is off. */
export function tracingSettings(env: TracingEnv): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED) return undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (base === undefined ? undefined : `${base.replace(/\/+$/, "")}/v1/traces`);
  if (url === undefined) return undefined;
  return {
    url,
    ...(env.OTEL_SERVICE_NAME ? { serviceName: env.OTEL_SERVICE_NAME } : {}),
    sampler: env.OTEL_TRACES_SAMPLER,
    ratio: env.OTEL_TRACES_SAMPLER_ARG ?? 1,
  };
}
