import { CATALOG, findCatalogProvider } from "@agentnet/catalog";
import { MAX_RATE_PER_1K } from "@agentnet/contracts";
import { computeCost } from "@agentnet/pricing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeCaller, makeGuardrail, makePolicy, makeProvider, makeSettings } from "../test-support/factories";
import { anthropic as anthropicWire } from "../wires/anthropic";
import { openai as openAiWire } from "../wires/openai";
import { captured, capturePlan } from "./capture";
import {
  admissionTokens,
  DEFAULT_OUTPUT_TOKENS,
  estimateTokens,
  fallbackHoldExtra,
  holdAmount,
  interruptedUsage,
  MAX_ESTIMATED_OUTPUT_TOKENS,
  outputCeiling,
  promptLength,
  promptText,
  rateAboveMaximum,
  ratesFor,
  STREAM_OUTPUT_STEP_TOKENS,
} from "./estimate";
import { checkHost, hostWithoutPort } from "./host";
import { identityHeaders, injectMetadata } from "./identity";
import type { JsonObject } from "./json";
import { MAX_OUTPUT_TOKENS_FIELD } from "./request-shape";
import { sessionIdFrom } from "./session";

describe("sessionIdFrom", () => {
  const uuid = "9f0c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b";
  it("prefers x-session-id, then Claude Code's header", () => {
    expect(sessionIdFrom({ "x-session-id": "a", "x-claude-code-session-id": "b" })).toBe("a");
    expect(sessionIdFrom({ "x-claude-code-session-id": "b", "session-id": "c" })).toBe("b");
  });

  it("reads Claude Code's metadata.user_id in its JSON and its older underscore shape", () => {
    const json = {
      metadata: { user_id: JSON.stringify({ device_id: "d", account_uuid: "", session_id: uuid }) },
    };
    expect(sessionIdFrom({}, json)).toBe(uuid);
    const legacy = { metadata: { user_id: `user_abc123_account_${uuid}_session_${uuid}` } };
    expect(sessionIdFrom({}, legacy)).toBe(uuid);
    expect(sessionIdFrom({ "x-claude-code-session-id": "h" }, json)).toBe("h");
    expect(sessionIdFrom({}, { metadata: { user_id: "{not json" } })).toBe("");
    expect(sessionIdFrom({}, { metadata: { user_id: "user_abc" } })).toBe("");
  });

  it("reads Codex's session-id and thread-id, then its older session_id and conversation_id", () => {
    expect(sessionIdFrom({ "session-id": "s", "thread-id": "t", session_id: "o" })).toBe("s");
    expect(sessionIdFrom({ "thread-id": "t", session_id: "o" })).toBe("t");
    expect(sessionIdFrom({ session_id: "c", conversation_id: "d" })).toBe("c");
    expect(sessionIdFrom({ conversation_id: "d" })).toBe("d");
  });

  it("reads OpenCode's x-opencode-session, and is empty without any", () => {
    expect(sessionIdFrom({ "x-opencode-session": "oc" })).toBe("oc");
    expect(sessionIdFrom({})).toBe("");
    // Whole, however long: one too long for a row is refused, not cut (identifierProblem).
    expect(sessionIdFrom({ "x-session-id": "x".repeat(500) })).toHaveLength(500);
  });
  it("groups a Gemini CLI run by its first turn, which every request of the run repeats", () => {
    const cli = { "user-agent": "GeminiCLI-tui/0.61.0/gemini-2.5-flash (linux; x64; terminal)" };
    const first = { role: "user", parts: [{ text: "<session_context>…</session_context> fix the bug" }] };
    const turn1 = { contents: [first] };
    const turn2 = {
      contents: [first, { role: "model", parts: [{ text: "ok" }] }, { role: "user", parts: [] }],
    };
    const session = sessionIdFrom(cli, turn1);
    expect(session).toMatch(/^gemini-cli-[A-Za-z0-9_-]{32}$/);
    expect(sessionIdFrom(cli, turn2)).toBe(session);
    expect(sessionIdFrom(cli, { contents: [{ role: "user", parts: [{ text: "another run" }] }] })).not.toBe(
      session,
    );
    expect(sessionIdFrom({ ...cli, "x-gemini-api-privileged-user-id": "install-2" }, turn1)).not.toBe(
      session,
    );
    expect(sessionIdFrom({ ...cli, "x-session-id": "named" }, turn1)).toBe("named");
    expect(sessionIdFrom({ "user-agent": "google-genai-sdk/1.30.0" }, turn1)).toBe("");
  });
});

describe("checkHost", () => {
  it("accepts the account's endpoint and loopback names, with or without a port", () => {
    expect(checkHost("acme.gw.example.com", "ACME.gw.example.com:8090").ok).toBe(true);
    expect(checkHost("acme.gw.example.com", "127.0.0.1:8090").ok).toBe(true);
    expect(checkHost("acme.gw.example.com", "[::1]:8090").ok).toBe(true);
    expect(checkHost("acme.gw.example.com", "localhost").ok).toBe(true);
    expect(checkHost("acme.gw.example.com", "other.gw.example.com")).toEqual({
      ok: false,
      reason: "gateway.endpoint_mismatch",
    });
    expect(hostWithoutPort("[::1]:80")).toBe("::1");
  });
});

const unicodeEscape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

describe("estimates", () => {
  it("counts prompt characters / 4 and the output cap", () => {
    const body = { messages: [{ role: "user", content: "x".repeat(100) }], max_tokens: 50 };
    const chars = JSON.stringify(body.messages).length;
    expect(estimateTokens(body, "chat")).toEqual({ input_tokens: Math.ceil(chars / 4), output_tokens: 50 });
    expect(estimateTokens({ input: "abcd", max_output_tokens: 7 }, "responses").output_tokens).toBe(7);
    expect(estimateTokens({ input: "abcd" }, "chat").output_tokens).toBe(DEFAULT_OUTPUT_TOKENS);
    expect(estimateTokens({ input: "abcd" }, "embeddings")).toEqual({ input_tokens: 1, output_tokens: 0 });
  });

  it("measures the prompt in the body as sent exactly as serialising it again would, however the caller wrote it", () => {
    const field = fc.constantFrom("messages", "system", "input", "contents", "model", "tools");
    // How clients other than JavaScript's write the same JSON: indented, Python's ASCII-only
    // escapes, Go's escaped `<>&`, escaped slashes.
    const writings: ((value: unknown) => string)[] = [
      (value) => JSON.stringify(value),
      (value) => JSON.stringify(value, null, 2),
      (value) => JSON.stringify(value).replace(/[^\x20-\x7e]/g, unicodeEscape),
      (value) => JSON.stringify(value).replace(/[<>&]/g, unicodeEscape),
      (value) => JSON.stringify(value).replaceAll("/", "\\/"),
    ];
    fc.assert(
      fc.property(
        fc.dictionary(field, fc.oneof(fc.jsonValue(), fc.jsonValue({ stringUnit: "binary" }))),
        fc.constantFrom(...writings),
        (body, write) => {
          const text = write(body);
          const parsed = JSON.parse(text) as JsonObject;
          expect(promptLength(parsed, text)).toBe(promptText(parsed).length);
        },
      ),
    );
    // Numbers JSON.stringify writes otherwise, a key sent twice, a string prompt, no prompt.
    for (const text of [
      '{"messages":[1e3,1.50,-0,12345678901234567890,1E2,0.1]}',
      '{"messages":[{"role":"user","role":"assistant","content":[]}],"model":"m"}',
      '{"messages":[],"messages":[{"content":"later"}],"system":"plain"}',
      '{"messages":[{"content":"\\\\u0041 \\\\/"}]}',
      '{"model":"m"}',
    ]) {
      const parsed = JSON.parse(text) as JsonObject;
      expect(promptLength(parsed, text), text).toBe(promptText(parsed).length);
    }
  });

  it("charges an interrupted answer at least the prompt estimate and a token per streamed event", () => {
    const body = { messages: "x".repeat(400) };
    const seen = { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0 };
    const promptEstimate = estimateTokens(body, "chat").input_tokens;
    expect(interruptedUsage(seen, promptEstimate, 7)).toEqual({
      ...seen,
      input_tokens: 100,
      output_tokens: 7,
    });
    // What the vendor did report (Anthropic's message_start) is kept when it is more.
    const reported = { input_tokens: 500, output_tokens: 9 };
    expect(interruptedUsage(reported, promptEstimate, 3)).toEqual(reported);
  });

  it("prices the estimate with the provider's row over the catalog", () => {
    const provider = makeProvider({ models: [{ id: "gpt-4o", input_per_1k: 1, output_per_1k: 2 }] });
    const catalog = findCatalogProvider("openai_api");
    if (!catalog) throw new Error("catalog");
    const pricing = ratesFor(provider, catalog, "gpt-4o", openAiWire);
    expect(pricing.shape).toBe("openai");
    const tokens = admissionTokens(
      estimateTokens({ input: "a".repeat(4000), max_tokens: 1000 }, "chat"),
      false,
    );
    expect(tokens).toEqual({ input_tokens: 1000, output_tokens: 1000 });
    // $1/1k in, $2/1k out: $3 in nano-USD.
    expect(holdAmount(tokens, pricing)).toEqual({ tokens: 2000, costNanos: 3_000_000_000, calls: 0 });
    expect(ratesFor(provider, catalog, "no-such-model", openAiWire).rates.pricing_known).toBe(false);
  });

  it("admits a stream with one output step and a non-streaming request with its worst case", () => {
    const agent = { messages: "x".repeat(400), max_tokens: 32_000 };
    const worst = estimateTokens(agent, "messages");
    expect(admissionTokens(worst, false)).toEqual({ input_tokens: 100, output_tokens: 32_000 });
    expect(admissionTokens(worst, true)).toEqual({
      input_tokens: 100,
      output_tokens: STREAM_OUTPUT_STEP_TOKENS,
    });
    expect(
      admissionTokens(estimateTokens({ ...agent, max_tokens: 10 }, "messages"), true).output_tokens,
    ).toBe(10);
  });
});

describe("fallbackHoldExtra: a fallback to other prices re-prices the hold", () => {
  const catalog = findCatalogProvider("openai_api");
  if (!catalog) throw new Error("catalog");
  const priced = (input: number, output: number) =>
    ratesFor(
      makeProvider({ models: [{ id: "m", input_per_1k: input, output_per_1k: output }] }),
      catalog,
      "m",
      openAiWire,
    );
  const tokens = { input_tokens: 1_000, output_tokens: 500 };

  it("grows the hold by what the request's worst cost is dearer there", () => {
    const held = holdAmount(tokens, priced(1, 2));
    const extra = fallbackHoldExtra(held, tokens, priced(2, 4));
    expect(extra).toEqual({
      tokens: 0,
      costNanos: holdAmount(tokens, priced(2, 4)).costNanos - held.costNanos,
      calls: 0,
    });
  });

  it("leaves the hold as it is for a provider as cheap or cheaper", () => {
    const held = holdAmount(tokens, priced(1, 2));
    expect(fallbackHoldExtra(held, tokens, priced(1, 2))).toBeUndefined();
    expect(fallbackHoldExtra(held, tokens, priced(0.5, 1))).toBeUndefined();
  });
});

describe("the cost of an estimate stays in pricing's exact range", () => {
  const openai = findCatalogProvider("openai_api");
  if (!openai) throw new Error("catalog");

  it("reads an output cap as at most the model's context window, else 1,000,000", () => {
    expect(outputCeiling(openai, "gpt-4o")).toBe(128_000);
    expect(outputCeiling(openai, "no-such-model")).toBe(MAX_ESTIMATED_OUTPUT_TOKENS);
    const body = { input: "abcd", max_tokens: MAX_OUTPUT_TOKENS_FIELD };
    expect(estimateTokens(body, "chat", outputCeiling(openai, "gpt-4o")).output_tokens).toBe(128_000);
    expect(estimateTokens(body, "chat").output_tokens).toBe(MAX_ESTIMATED_OUTPUT_TOKENS);
  });

  it("names a rate above MAX_RATE_PER_1K, which a provider stored before the bound may hold", () => {
    const rates = (input_per_1k: number) =>
      ratesFor(
        makeProvider({ models: [{ id: "m", input_per_1k, output_per_1k: 1 }] }),
        openai,
        "m",
        openAiWire,
      ).rates;
    expect(rateAboveMaximum(rates(MAX_RATE_PER_1K))).toBeUndefined();
    expect(rateAboveMaximum(rates(1e12))).toBe("input_per_1k 1000000000000");
  });

  // No fast-check in the workspace: a table of the extremes of every input instead. The prompt
  // estimate is a quarter of the body, so bodies up to 64 MiB (six times the default limit) count.
  it("never throws at the highest rate, for any output cap, body size, model and shape", () => {
    const highest = {
      input_per_1k: MAX_RATE_PER_1K,
      output_per_1k: MAX_RATE_PER_1K,
      cached_input_per_1k: MAX_RATE_PER_1K,
      cache_read_per_1k: MAX_RATE_PER_1K,
      cache_creation_per_1k: MAX_RATE_PER_1K,
    };
    const largestSafe = Number.MAX_SAFE_INTEGER;
    for (const entry of CATALOG) {
      for (const model of [...entry.models.map((m) => m.id), "unlisted-model"]) {
        const provider = makeProvider({ provider_id: entry.id, models: [{ id: model, ...highest }] });
        const pricing = ratesFor(
          provider,
          entry,
          model,
          entry.api_flavor === "anthropic" ? anthropicWire : openAiWire,
        );
        for (const maxTokens of [1, DEFAULT_OUTPUT_TOKENS, 128_000, MAX_OUTPUT_TOKENS_FIELD]) {
          for (const bodyChars of [0, 10 * 1024 * 1024, 64 * 1024 * 1024]) {
            const body = { messages: "x".repeat(bodyChars), max_tokens: maxTokens };
            const worst = estimateTokens(body, "messages", outputCeiling(entry, model));
            for (const stream of [false, true]) {
              const admitted = admissionTokens(worst, stream);
              const cost = computeCost(admitted, pricing.rates, pricing.shape);
              expect(cost.cost_nanos).toBeLessThanOrEqual(largestSafe);
            }
          }
        }
        // An upstream's own report, however absurd, is billed within range too.
        const reported = { input_tokens: 1e15, output_tokens: 1e15, cached_input_tokens: 1e15 };
        const usage = { ...reported, cache_creation_tokens: 1e15, cache_creation_1h_tokens: 1e15 };
        expect(computeCost(usage, pricing.rates, pricing.shape).cost_nanos).toBeLessThanOrEqual(largestSafe);
      }
    }
  });
});

describe("capturePlan", () => {
  const capture = (redact: boolean) =>
    makeGuardrail({
      id: "cap",
      checks: {
        model_allowlist: { enabled: false, models: [] },
        prompt_capture: { enabled: true, redact_pii: redact },
      },
    });
  const policy = makePolicy({ guardrail_ids: ["cap"] });
  it("captures only with prompt collection, log collection and a capturing guardrail", () => {
    const guardrails = new Map([["cap", capture(false)]]);
    expect(capturePlan(makeSettings(), policy, guardrails)).toEqual({ capture: false });
    expect(capturePlan(makeSettings({ enable_prompt_collection: true }), policy, guardrails)).toEqual({
      capture: true,
      redact: false,
    });
    expect(
      capturePlan(
        makeSettings({ enable_prompt_collection: true, enable_log_collection: false }),
        policy,
        guardrails,
      ),
    ).toEqual({ capture: false });
    expect(capturePlan(makeSettings({ enable_prompt_collection: true }), makePolicy(), guardrails)).toEqual({
      capture: false,
    });
  });
  it("redacts when the settings or the guardrail ask", () => {
    const settings = makeSettings({ enable_prompt_collection: true });
    expect(capturePlan(settings, policy, new Map([["cap", capture(true)]]))).toEqual({
      capture: true,
      redact: true,
    });
    expect(
      capturePlan({ ...settings, redact_pii: true }, policy, new Map([["cap", capture(false)]])),
    ).toEqual({ capture: true, redact: true });
    expect(captured("mail me at a@b.io", { capture: true, redact: true })).toBe("mail me at [EMAIL]");
    expect(captured("x", { capture: false })).toBeUndefined();
  });
});

describe("identity", () => {
  const caller = makeCaller();
  it("stamps the configured headers with the display identity and group ids", () => {
    const provider = makeProvider({ identity_header_user_id: "X-User", identity_header_groups: "X-Groups" });
    expect(identityHeaders(provider, caller)).toEqual({
      "x-user": "dev@example.com",
      "x-groups": "grp_all,grp_eng",
    });
    expect(identityHeaders(makeProvider(), caller)).toEqual({});
  });
  it("sends no identity headers when the provider has identity metadata disabled", () => {
    const provider = makeProvider({
      identity_header_user_id: "X-User",
      identity_header_groups: "X-Groups",
      metadata_disabled: true,
    });
    expect(identityHeaders(provider, caller)).toEqual({});
  });
  it("injects the opaque user id where the vendor takes it", () => {
    const openaiBody: JsonObject = { user: "spoofed" };
    injectMetadata(openaiBody, findCatalogProvider("openai_api")?.identity_injection.json_metadata, caller);
    expect(openaiBody.user).toBe("usr_1");
    const anthropicBody: JsonObject = { metadata: { other: 1 } };
    injectMetadata(
      anthropicBody,
      findCatalogProvider("anthropic_api")?.identity_injection.json_metadata,
      caller,
    );
    expect(anthropicBody.metadata).toEqual({ other: 1, user_id: "usr_1" });
    const headers = injectMetadata(
      {},
      findCatalogProvider("cloudflare_api")?.identity_injection.json_metadata,
      caller,
    );
    expect(Object.keys(headers)).toEqual(["cf-aig-metadata"]);
  });
});
