import { describe, expect, it } from "vitest";
import { replicaCount, replicaName, replicaPorts } from "./topology";

describe("replicaCount", () => {
  it("runs one of each service on one NATS server", () => {
    expect(replicaCount("gateway-proxy", "single", false)).toBe(1);
    expect(replicaCount("consumption", "single", true)).toBe(1);
  });

  it("runs three proxies and two of every other service on a cluster", () => {
    expect(replicaCount("gateway-proxy", "cluster", false)).toBe(3);
    for (const app of ["api-gateway", "control-plane", "consumption", "provider-verifier"] as const) {
      expect(replicaCount(app, "cluster", false), app).toBe(2);
    }
  });

  it("runs one telemetry with chDB, whose files belong to one process, and two with ClickHouse", () => {
    expect(replicaCount("telemetry", "cluster", false)).toBe(1);
    expect(replicaCount("telemetry", "cluster", true)).toBe(2);
  });
});

describe("replicaName", () => {
  it("numbers replicas from 1 and leaves a single process its service's name", () => {
    expect(replicaName("gateway-proxy", 1, 3)).toBe("gateway-proxy#2");
    expect(replicaName("telemetry", 0, 1)).toBe("telemetry");
  });
});

describe("replicaPorts", () => {
  it("counts up from the base port, skipping ports other parts were given", () => {
    expect(replicaPorts(8090, 3, new Set([8091, 8080, 8081]))).toEqual([8090, 8092, 8093]);
    expect(replicaPorts(8080, 2, new Set([8090, 8091]))).toEqual([8080, 8081]);
  });
});
