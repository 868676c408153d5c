import { findCatalogProvider } from "@agentnet/catalog";
import { describe, expect, it } from "vitest";
import { makeProvider } from "../test-support/factories";
import { anthropic as anthropicWire } from "../wires/anthropic";
import { gemini as geminiWire } from "../wires/gemini";
import { openai as openAiWire } from "../wires/openai";
import { estimateTokens, holdAmount, ratesFor, streamStepAmount } from "./estimate";

/** A hold is priced in floating point and rounded up: the exact nano-USD, or one more. */
const expectHeld = (costNanos: number, exact: number) => {
  expect(costNanos).toBeGreaterThanOrEqual(exact);
  expect(costNanos).toBeLessThanOrEqual(exact + 1);
};

const catalogOf = (id: string) => {
  const entry = findCatalogProvider(id);
  if (!entry) throw new Error(`no catalog entry ${id}`);
  return entry;
};

describe("a hold is priced at the long-context tier when the estimated prompt is above its threshold", () => {
  it("Gemini 2.5 Pro: at or under 200k estimated prompt tokens the base rates, above them the tier's", () => {
    const pricing = ratesFor(makeProvider(), catalogOf("gemini_api"), "gemini-2.5-pro", geminiWire);
    // $1.25 in / $10 out per million: 200,000 × 1,250 + 1,000 × 10,000 nano-USD.
    expectHeld(holdAmount({ input_tokens: 200_000, output_tokens: 1_000 }, pricing).costNanos, 260_000_000);
    // Above: $2.50 / $15 for every token: 200,001 × 2,500 + 1,000 × 15,000.
    expectHeld(holdAmount({ input_tokens: 200_001, output_tokens: 1_000 }, pricing).costNanos, 515_002_500);
  });

  it("Claude Sonnet 4.5 on Vertex (Anthropic wire): an estimate of a 1M-context prompt holds $6 / $22.50", () => {
    const vertex = catalogOf("vertex_api");
    const pricing = ratesFor(makeProvider(), vertex, "claude-sonnet-4-5@20250929", anthropicWire);
    const tokens = estimateTokens({ messages: "x".repeat(1_200_000), max_tokens: 2_000 }, "messages");
    expect(tokens.input_tokens).toBeGreaterThan(200_000);
    const expected = Math.ceil((tokens.input_tokens * 0.006 + 2_000 * 0.0225) * 1e6);
    expectHeld(holdAmount(tokens, pricing).costNanos, expected);
  });

  it("GPT-5.4: the tier starts above 272k; a model without a tier holds at its base rates at any size", () => {
    const openai = catalogOf("openai_api");
    const gpt54 = ratesFor(makeProvider(), openai, "gpt-5.4", openAiWire);
    expectHeld(holdAmount({ input_tokens: 272_000, output_tokens: 0 }, gpt54).costNanos, 680_000_000);
    expectHeld(holdAmount({ input_tokens: 272_001, output_tokens: 0 }, gpt54).costNanos, 1_360_005_000);
    const gpt51 = ratesFor(makeProvider(), openai, "gpt-5.1", openAiWire);
    expectHeld(holdAmount({ input_tokens: 300_000, output_tokens: 0 }, gpt51).costNanos, 375_000_000);
  });
});

describe("a capped stream's output step is priced like its admission hold", () => {
  it("Gemini 2.5 Pro: $10 per million output at or under 200k prompt tokens, $15 above", () => {
    const pricing = ratesFor(makeProvider(), catalogOf("gemini_api"), "gemini-2.5-pro", geminiWire);
    // One step of 1,024 output tokens: × 10,000 nano-USD, then × 15,000.
    expectHeld(streamStepAmount(pricing, 200_000).costNanos, 10_240_000);
    expectHeld(streamStepAmount(pricing, 200_001).costNanos, 15_360_000);
  });
});
