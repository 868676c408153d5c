import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findCatalogProvider } from "@agentnet/catalog";
import type { ProviderModel } from "@agentnet/contracts";
import { computeCost } from "@agentnet/pricing";
import { describe, expect, it } from "vitest";
import { estimateTokens, interruptedUsage, ratesFor } from "../domain/estimate";
import { makeProvider } from "../test-support/factories";
import { streamUsage } from "../upstream/forward";
import { WIRES } from "./index";
import { StreamWatcher } from "./stream-watcher";
import type { Operation } from "./wire";

/**
 * The golden corpus (apps/gateway-proxy/golden): vendor answers as they arrive, each with its cost
 * worked out by hand in cases.json. Each is read and priced by the code the proxy runs on a live
 * answer (the stream watcher or the body reader, the interrupted-stream rule, the rate
 * resolution and computeCost), and must match to the nano-dollar.
 */
const GOLDEN = join(import.meta.dirname, "..", "..", "golden");

interface GoldenCase {
  file: string;
  about: string;
  wire: keyof typeof WIRES;
  operation: Operation;
  catalog: string;
  model: string;
  provider_model?: ProviderModel;
  aborted?: boolean;
  request?: Record<string, unknown>;
  /** The answer's headers, where they carry usage (Bedrock's token counts). */
  headers?: Record<string, string>;
  computation: string;
  expected: Record<string, number>;
}

const { cases } = JSON.parse(readFileSync(join(GOLDEN, "cases.json"), "utf8")) as { cases: GoldenCase[] };

function priced(golden: GoldenCase) {
  const recorded = readFileSync(join(GOLDEN, golden.file));
  let usage: ReturnType<(typeof WIRES)["openai"]["answerUsage"]>;
  // Streams as they came: server-sent events (.sse), AWS's event stream (.eventstream).
  if (golden.file.endsWith(".sse") || golden.file.endsWith(".eventstream")) {
    const watcher = new StreamWatcher(WIRES[golden.wire].stream, 0);
    watcher.push(recorded);
    const streamed = streamUsage(watcher);
    usage = golden.aborted
      ? interruptedUsage(
          streamed.usage,
          estimateTokens(golden.request ?? {}, golden.operation).input_tokens,
          streamed.streamedOutputTokens(),
        )
      : streamed.usage;
  } else {
    usage = WIRES[golden.wire].answerUsage(JSON.parse(recorded.toString("utf8")), golden.headers ?? {});
  }
  const catalog = findCatalogProvider(golden.catalog);
  if (!catalog) throw new Error(`no catalog provider ${golden.catalog}`);
  const provider = makeProvider({
    provider_id: golden.catalog,
    models: golden.provider_model ? [golden.provider_model] : [],
  });
  const pricing = ratesFor(provider, catalog, golden.model, WIRES[golden.wire]);
  return { usage, cost: computeCost(usage, pricing.rates, pricing.shape) };
}

describe("golden cost corpus", () => {
  it.each(cases.map((golden) => [golden.file, golden] as const))("%s", (_file, golden) => {
    const { usage, cost } = priced(golden);
    const { expected } = golden;
    expect(
      {
        input_tokens: usage.input_tokens,
        cached_input_tokens: usage.cached_input_tokens,
        cache_creation_tokens: usage.cache_creation_tokens,
        output_tokens: usage.output_tokens,
        input_cost_nanos: cost.input_cost_nanos,
        cached_input_cost_nanos: cost.cached_input_cost_nanos,
        cache_creation_cost_nanos: cost.cache_creation_cost_nanos,
        output_cost_nanos: cost.output_cost_nanos,
        cost_nanos: cost.cost_nanos,
      },
      `${golden.about}: ${golden.computation}`,
    ).toEqual(expected);
  });

  it("prices every recorded answer, each by hand with parts that add up to its total", () => {
    const recorded = readdirSync(GOLDEN).filter((file) => file !== "cases.json");
    expect(cases.map((golden) => golden.file).sort()).toEqual(recorded.sort());
    for (const { file, expected } of cases) {
      const parts = ["input", "cached_input", "cache_creation", "output"].map(
        (kind) => expected[`${kind}_cost_nanos`],
      );
      expect(
        parts.reduce((sum = 0, part = 0) => sum + part, 0),
        file,
      ).toBe(expected.cost_nanos);
    }
  });
});
