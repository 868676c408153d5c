import { findCatalogProvider } from "@agentnet/catalog";
import { DEFAULT_ROUTING, type PolicyRouting } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { makePolicy, makeProvider } from "../test-support/factories";
import { attemptOrder, type RouteState, WeightedRotation } from "./balance";
import type { Route } from "./decision";

const catalog = findCatalogProvider("openai_api");
if (!catalog) throw new Error("openai_api is in the catalog");
const routeTo = (id: string): Route => ({
  provider: makeProvider({ id, name: id }),
  catalog,
  policy: makePolicy(),
  model: "gpt-4o",
});
const [a, b, c] = [routeTo("a"), routeTo("b"), routeTo("c")];
const ids = (routes: readonly Route[]) => routes.map((route) => route.provider.id);

const stateOf = (load: Record<string, number> = {}, cooling: string[] = []): RouteState => ({
  rotation: new WeightedRotation(),
  load: (id) => load[id] ?? 0,
  cooling: (id) => cooling.includes(id),
});
const routing = (overrides: Partial<PolicyRouting>): PolicyRouting => ({ ...DEFAULT_ROUTING, ...overrides });

describe("attemptOrder", () => {
  it("priority tries the candidates in the order listed", () => {
    expect(ids(attemptOrder(DEFAULT_ROUTING, "pol", [a, b, c], stateOf()))).toEqual(["a", "b", "c"]);
  });

  it("one candidate is its own order, the same array", () => {
    const only = [a];
    expect(attemptOrder(routing({ strategy: "weighted" }), "pol", only, stateOf())).toBe(only);
  });

  it("weighted 3:1 splits 400 picks within 5 % of 75/25", () => {
    const state = stateOf();
    const weighted = routing({ strategy: "weighted", weights: { a: 3, b: 1 } });
    let first = 0;
    for (let i = 0; i < 400; i++) if (attemptOrder(weighted, "pol", [a, b], state)[0] === a) first++;
    expect(Math.abs(first / 400 - 0.75)).toBeLessThanOrEqual(0.05);
  });

  it("weighted never bunches: 3:1 goes a, a, b, a", () => {
    const state = stateOf();
    const weighted = routing({ strategy: "weighted", weights: { a: 3, b: 1 } });
    const picks = Array.from(
      { length: 4 },
      () => attemptOrder(weighted, "pol", [a, b], state)[0]?.provider.id,
    );
    expect(picks.sort()).toEqual(["a", "a", "a", "b"]);
  });

  it("weighted keeps a rotation per policy", () => {
    const state = stateOf();
    const even = routing({ strategy: "weighted", weights: {} });
    expect(ids(attemptOrder(even, "one", [a, b], state))[0]).toBe("a");
    expect(ids(attemptOrder(even, "two", [a, b], state))[0]).toBe("a");
    expect(ids(attemptOrder(even, "one", [a, b], state))[0]).toBe("b");
  });

  it("weight 0 is never picked first but stays a fallback, after the heavier ones", () => {
    const state = stateOf();
    const weighted = routing({ strategy: "weighted", weights: { a: 0, b: 1, c: 5 } });
    for (let i = 0; i < 10; i++)
      expect(ids(attemptOrder(weighted, "pol", [a, b, c], state)).at(-1)).toBe("a");
  });

  it("least_busy tries the provider with the fewest requests in flight first, ties in order", () => {
    const order = attemptOrder(
      routing({ strategy: "least_busy" }),
      "pol",
      [a, b, c],
      stateOf({ a: 2, b: 1, c: 1 }),
    );
    expect(ids(order)).toEqual(["b", "c", "a"]);
  });

  it("a provider cooling down goes last, and is still tried when it is all there is", () => {
    expect(ids(attemptOrder(DEFAULT_ROUTING, "pol", [a, b, c], stateOf({}, ["a"])))).toEqual(["b", "c", "a"]);
    expect(ids(attemptOrder(DEFAULT_ROUTING, "pol", [a, b], stateOf({}, ["a", "b"])))).toEqual(["a", "b"]);
  });
});
