import { describe, expect, it } from "vitest";
import { z } from "zod";
import { baseEnv, parseEnvWith } from "./env";
import { tracingSettings } from "./tracing-env";

const settingsOf = (source: Record<string, string>) =>
  tracingSettings(parseEnvWith(z.object(baseEnv), source));

describe("tracing from OpenTelemetry's standard variables", () => {
  it("is off unless an OTLP endpoint is set, and off when set empty", () => {
    expect(settingsOf({})).toBeUndefined();
    expect(settingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_TRACES_SAMPLER: "" })).toBeUndefined();
  });

  it("posts to <endpoint>/v1/traces, or to the traces endpoint as given, which wins", () => {
    expect(settingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })?.url).toBe(
      "http://collector:4318/v1/traces",
    );
    expect(
      settingsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.com/otlp/spans",
      })?.url,
    ).toBe("https://traces.example.com/otlp/spans");
  });

  it("keeps every trace a parent kept by default; a sampler and its ratio are taken as named", () => {
    expect(settingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toEqual({
      url: "http://c:4318/v1/traces",
      sampler: "parentbased_always_on",
      ratio: 1,
    });
    expect(
      settingsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_TRACES_SAMPLER: "ParentBased_TraceIdRatio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        OTEL_SERVICE_NAME: "edge-proxy",
      }),
    ).toEqual({
      url: "http://c:4318/v1/traces",
      sampler: "parentbased_traceidratio",
      ratio: 0.25,
      serviceName: "edge-proxy",
    });
  });

  it("OTEL_SDK_DISABLED=true turns it off whatever else is set", () => {
    expect(
      settingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }),
    ).toBeUndefined();
  });

  it("refuses an unknown sampler, a ratio outside 0..1 and an endpoint that is not a URL, naming each", () => {
    expect(() =>
      settingsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
        OTEL_TRACES_SAMPLER: "sometimes",
        OTEL_TRACES_SAMPLER_ARG: "2",
      }),
    ).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT[\s\S]*OTEL_TRACES_SAMPLER[\s\S]*OTEL_TRACES_SAMPLER_ARG/);
  });
});
