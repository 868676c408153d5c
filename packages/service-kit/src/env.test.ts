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

describe("ids", () => {
  it("makes 20-character URL-safe ids that do not repeat", () => {
    const ids = new Set(Array.from({ length: 1_000 }, newId));
    expect(ids.size).toBe(1_000);
    for (const id of ids) expect(id).toMatch(/^[0-9a-v]{20}$/);
  });
});
