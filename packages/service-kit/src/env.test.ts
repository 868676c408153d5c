import { describe, expect, it } from "vitest";
import { z } from "zod";
import { baseEnv, envBoolean, envPort, parseEnvWith } from "./env";
import { newId } from "./ids";

describe("env parsing", () => {
  it("reads booleans explicitly: 'false' is false", () => {
    expect(envBoolean.parse("false")).toBe(false);
    expect(envBoolean.parse("0")).toBe(false);
    expect(envBoolean.parse("true")).toBe(true);
    expect(envBoolean.safeParse("maybe").success).toBe(false);
  });

  it("coerces ports and refuses out-of-range ones", () => {
    expect(envPort.parse("8080")).toBe(8080);
    expect(envPort.safeParse("70000").success).toBe(false);
  });

  it("applies defaults and names every bad variable in one error", () => {
    const schema = z.object({ ...baseEnv, PORT: envPort });
    expect(parseEnvWith(schema, { PORT: "1" })).toMatchObject({
      NATS_URL: "nats://127.0.0.1:4222",
      LOG_LEVEL: "info",
    });
    expect(() => parseEnvWith(schema, { PORT: "x", LOG_LEVEL: "loud" })).toThrow(
      /PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/,
    );
  });
});

describe("the NATS settings", () => {
  const schema = z.object(baseEnv);

  it("takes a cluster's servers as a comma-separated list, nats:// or tls://", () => {
    const servers = "nats://10.0.0.1:4222, tls://nats-b.internal:4222,nats://[::1]:4223";
    expect(parseEnvWith(schema, { NATS_URL: servers }).NATS_URL).toBe(servers);
  });

  it("names every entry that is not a NATS server's URL", () => {
    expect(() => parseEnvWith(schema, { NATS_URL: "nats://a:4222,b:4222,http://c:4222" })).toThrow(
      /NATS_URL: "b:4222" is not a nats:\/\/ or tls:\/\/ URL\n {2}NATS_URL: "http:\/\/c:4222" is not a nats:\/\/ or tls:\/\/ URL/,
    );
    expect(() => parseEnvWith(schema, { NATS_URL: "127.0.0.1" })).toThrow(/"127.0.0.1" is not a URL/);
    expect(() => parseEnvWith(schema, { NATS_URL: " , " })).toThrow(/NATS_URL: names no server/);
  });

  it("keeps streams on one server unless AGN_STREAM_REPLICAS says 1 to 5", () => {
    expect(parseEnvWith(schema, {}).AGN_STREAM_REPLICAS).toBe(1);
    expect(parseEnvWith(schema, { AGN_STREAM_REPLICAS: "3" }).AGN_STREAM_REPLICAS).toBe(3);
    for (const bad of ["0", "6", "2.5", "three"]) {
      expect(() => parseEnvWith(schema, { AGN_STREAM_REPLICAS: bad })).toThrow(/AGN_STREAM_REPLICAS/);
    }
  });
});

describe("ids", () => {
  it("makes 20-character URL-safe ids that do not repeat", () => {
    const ids = new Set(Array.from({ length: 1_000 }, newId));
    expect(ids.size).toBe(1_000);
    for (const id of ids) expect(id).toMatch(/^[0-9a-v]{20}$/);
  });
});
