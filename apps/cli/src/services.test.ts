import { describe, expect, it } from "vitest";
import { failureReason } from "./services";

describe("failureReason", () => {
  it("is a fatal log line's message and error", () => {
    const lines = [
      '{"level":30,"msg":"open file limit"}',
      '{"level":60,"err":{"type":"Error","message":"listen EADDRINUSE: address already in use 127.0.0.1:18555"},"msg":"gateway-proxy failed to start"}',
      '{"level":30,"msg":"stopped"}',
    ];
    expect(failureReason(lines)).toBe(
      "gateway-proxy failed to start: listen EADDRINUSE: address already in use 127.0.0.1:18555",
    );
  });

  it("is an uncaught error with its message's lines, not its stack or Node's version", () => {
    const lines = [
      "/work/main/packages/service-kit/src/env.ts:166",
      "  throw new Error(`invalid configuration: ...`);",
      "        ^",
      "",
      "",
      "Error: invalid configuration:",
      "  AGN_PROXY_PORT: Invalid input: expected number, received NaN",
      "  AGN_SEALING_KEY: AGN_SEALING_KEY is required (openssl rand -base64 32)",
      "    at parseEnvWith (/work/main/packages/service-kit/src/env.ts:166:9)",
      "    at parseEnv (/work/main/apps/gateway-proxy/src/env.ts:102:73)",
      "",
      "Node.js v20.20.2",
    ];
    expect(failureReason(lines)).toBe(
      "Error: invalid configuration: AGN_PROXY_PORT: Invalid input: expected number, received NaN; AGN_SEALING_KEY: AGN_SEALING_KEY is required (openssl rand -base64 32)",
    );
  });

  it("is a worker's fatal line with its error rather than its primary's later line without one", () => {
    const lines = [
      '{"level":60,"worker":1,"err":{"type":"Error","message":"listen EADDRINUSE: address already in use 127.0.0.1:8090"},"msg":"gateway-proxy failed to start"}',
      '{"level":60,"worker":1,"code":1,"signal":null,"msg":"gateway-proxy worker failed to start"}',
    ];
    expect(failureReason(lines)).toBe(
      "gateway-proxy failed to start: listen EADDRINUSE: address already in use 127.0.0.1:8090",
    );
    expect(failureReason(lines.slice(1))).toBe("gateway-proxy worker failed to start");
  });

  it("is the last line when no line says more, and says so when there was none", () => {
    expect(failureReason(['{"level":30,"msg":"starting"}', "Killed"])).toBe("Killed");
    expect(failureReason([])).toBe("it printed nothing");
  });
});
