import {
  AccessLogEntryView,
  MAX_ATTEMPTS_LISTED,
  MAX_MODEL_LENGTH,
  MAX_NAME_LENGTH,
} from "@agentnet/contracts";
import { makeEvent } from "@agentnet/testkit";
import { describe, expect, it } from "vitest";
import { toPage } from "./pages";
import {
  ENTRY_BYTES_AT_LEAST,
  entriesWithin,
  fitEntries,
  fitEntry,
  fitSessions,
  jsonBytes,
  prefixWithin,
  previewChars,
  replyBudget,
  shortenLongest,
  TRUNCATED_MARK,
} from "./reply-budget";

const MAX_PAYLOAD = 1024 * 1024;
const entry = (overrides: Parameters<typeof makeEvent>[0] = {}): AccessLogEntryView =>
  AccessLogEntryView.parse(makeEvent(overrides));
const text = (chars: number, unit = "x") => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
/** What serve() sends for a page: the envelope around the page, as bytes. */
const replyBytes = (data: unknown[], pageSize: number) =>
  jsonBytes({ ok: true, data: toPage(data, 2 ** 31, pageSize, Number.MAX_SAFE_INTEGER) });

describe("prefixWithin", () => {
  // Every kind of character JSON.stringify writes differently, surrogate pairs and lone halves included.
  const units = ["a", '"', "\\", "\n", "\u0001", "é", "€", "😀", "\ud800", "\udc00", "\u2028"];

  it("keeps the longest prefix whose JSON string takes at most the budget, never half a surrogate pair", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    for (let round = 0; round < 200; round++) {
      const sample = Array.from({ length: 40 }, () => units[Math.floor(random() * units.length)]).join("");
      for (let budget = 0; budget <= 120; budget += 7) {
        const kept = prefixWithin(sample, budget);
        expect(sample.startsWith(kept)).toBe(true);
        expect(jsonBytes(kept) - 2).toBeLessThanOrEqual(budget);
        if (kept.length < sample.length) {
          const pair = /^[\ud800-\udbff][\udc00-\udfff]/.test(sample.slice(kept.length));
          const next = sample.slice(0, kept.length + (pair ? 2 : 1));
          expect(jsonBytes(next) - 2).toBeGreaterThan(budget);
        }
      }
    }
  });
});

describe("shortenLongest", () => {
  it("cuts the longest values first, each marked, until the excess is gone", () => {
    const { values, excess } = shortenLongest(["short", text(1_000), text(500, "é")], 300);
    expect(values[0]).toBe("short");
    expect(values[2]).toBe(text(500, "é"));
    expect(values[1]?.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(excess).toBeLessThanOrEqual(0);
    expect(jsonBytes(values[1]) - 2).toBeGreaterThanOrEqual(1_000 - 300 - 3);
  });

  it("leaves values no longer than the mark and says what is still over", () => {
    expect(shortenLongest(["a", "bb"], 10)).toEqual({ values: ["a", "bb"], excess: 10 });
  });
});

describe("fitEntry", () => {
  it("answers an entry that fits as it is", () => {
    const small = entry({ request_prompt: "hello", response_completion: "hi" });
    expect(fitEntry(small, 10_000)).toEqual({ entry: small, bytes: jsonBytes(small) });
  });

  it("cuts a long prompt to what the budget leaves and flags it; a short completion stays whole", () => {
    const long = entry({ request_prompt: text(32_768), response_completion: "done" });
    const { entry: fitted, bytes } = fitEntry(long, 10_000);
    expect(bytes).toBeLessThanOrEqual(10_000);
    expect(bytes).toBeGreaterThan(9_900);
    expect(long.request_prompt?.startsWith(fitted.request_prompt ?? "-")).toBe(true);
    expect(fitted).toMatchObject({ request_prompt_truncated: true, response_completion: "done" });
    expect(fitted).not.toHaveProperty("response_completion_truncated");
  });

  it("shares the room evenly between two long texts", () => {
    const fitted = fitEntry(
      entry({ request_prompt: text(32_768), response_completion: text(32_768, "é") }),
      10_000,
    );
    const promptBytes = jsonBytes(fitted.entry.request_prompt) - 2;
    const completionBytes = jsonBytes(fitted.entry.response_completion) - 2;
    expect(Math.abs(promptBytes - completionBytes)).toBeLessThanOrEqual(2);
    expect(fitted.entry).toMatchObject({
      request_prompt_truncated: true,
      response_completion_truncated: true,
    });
  });

  it("keeps the store's flag on a preview it did not have to cut again", () => {
    const preview = entry({ request_prompt: "first words" });
    const flagged = { ...preview, request_prompt_truncated: true };
    expect(fitEntry(flagged, 10_000).entry).toEqual(flagged);
  });

  it("cuts a model name of many kilobytes too, marked as the proxy marks it, once the texts are empty", () => {
    const huge = entry({ model: text(900_000), path: text(5_000, "/p"), request_prompt: "hello" });
    const { entry: fitted, bytes } = fitEntry(huge, 10_000);
    expect(bytes).toBeLessThanOrEqual(10_000);
    expect(bytes).toBeGreaterThan(9_900);
    expect(fitted).toMatchObject({ request_prompt: "", request_prompt_truncated: true, path: huge.path });
    expect(fitted.model.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(huge.model.startsWith(fitted.model.slice(0, -TRUNCATED_MARK.length))).toBe(true);
  });

  it("says what an entry takes when even cut free text leaves it over (its lists are never cut)", () => {
    const groups = Array.from({ length: 1_000 }, (_, i) => `grp_${i}`);
    const { entry: fitted, bytes } = fitEntry(entry({ group_ids: groups, model: text(3_000) }), 10_000);
    expect(fitted.group_ids).toEqual(groups);
    expect(bytes).toBe(jsonBytes(fitted));
    expect(bytes).toBeGreaterThan(10_000);
  });
});

describe("fitEntries", () => {
  it("answers a page of 100 entries with 32 KiB prompts and completions under max_payload, every entry there", () => {
    const budget = replyBudget(MAX_PAYLOAD);
    const entries = Array.from({ length: 100 }, () =>
      entry({ request_prompt: text(32_768, "é€"), response_completion: text(32_768, '"\n') }),
    );
    const fitted = fitEntries(entries, budget);
    expect(fitted.entries.map((e) => e.id)).toEqual(entries.map((e) => e.id));
    expect(fitted.bytes).toBeLessThanOrEqual(budget);
    expect(replyBytes(fitted.entries, 100)).toBeLessThanOrEqual(MAX_PAYLOAD);
    for (const e of fitted.entries) {
      expect(e).toMatchObject({ request_prompt_truncated: true, response_completion_truncated: true });
      // Each its share: a hundredth, plus what entries before it left (a few bytes each, at most).
      expect(jsonBytes(e)).toBeLessThanOrEqual(budget / 100 + 600);
    }
  });

  it("answers a page of 100 entries each listing the most attempts, of the longest names, every entry there", () => {
    const budget = replyBudget(MAX_PAYLOAD);
    // Provider and model names as long as a body and the proxy let them be, in 3-byte characters.
    const attempt = {
      provider_id: "prov_0123456789abcdef01234567",
      provider: text(MAX_NAME_LENGTH, "€"),
      model: text(MAX_MODEL_LENGTH, "€"),
      status: 0,
      error: "stream_failed_before_first_byte",
      duration_ms: 600_000,
    };
    const entries = Array.from({ length: 100 }, () =>
      entry({
        model: attempt.model,
        provider: attempt.provider,
        request_prompt: text(32_768),
        attempts: Array.from({ length: MAX_ATTEMPTS_LISTED }, () => attempt),
      }),
    );
    const fitted = fitEntries(entries, budget);
    expect(fitted.entries.map((e) => e.id)).toEqual(entries.map((e) => e.id));
    expect(fitted.entries.every((e) => e.attempts?.length === MAX_ATTEMPTS_LISTED)).toBe(true);
    expect(replyBytes(fitted.entries, 100)).toBeLessThanOrEqual(MAX_PAYLOAD);
  });

  it("leaves what a short entry does not need to the entries after it", () => {
    const entries = [entry(), entry({ request_prompt: text(32_768) })];
    const fitted = fitEntries(entries, 20_000);
    expect(fitted.entries[0]).toEqual(entries[0]);
    expect(jsonBytes(fitted.entries[1])).toBeGreaterThan(10_000);
    expect(fitted.bytes).toBeLessThanOrEqual(20_000);
  });

  it("stops before the first entry that does not fit even cut", () => {
    const groups = Array.from({ length: 3_000 }, (_, i) => `grp_${i}`);
    const entries = [entry(), entry({ group_ids: groups }), entry()];
    const fitted = fitEntries(entries, 20_000);
    expect(fitted.entries.map((e) => e.id)).toEqual([entries[0]?.id]);
  });
});

describe("fitSessions", () => {
  const session = (entries: AccessLogEntryView[]) => ({ session_id: "s", models: ["gpt-4o"], entries });

  it("answers 100 sessions of 100 long entries each under max_payload, each with its first entries", () => {
    const budget = replyBudget(MAX_PAYLOAD);
    const sessions = Array.from({ length: 100 }, () =>
      session(Array.from({ length: 100 }, () => entry({ request_prompt: text(32_768) }))),
    );
    const fitted = fitSessions(sessions, budget);
    expect(fitted).toHaveLength(100);
    expect(replyBytes(fitted ?? [], 100)).toBeLessThanOrEqual(MAX_PAYLOAD);
    for (const [i, s] of (fitted ?? []).entries()) {
      expect(s.entries.length).toBeGreaterThan(0);
      expect(s.entries.map((e) => e.id)).toEqual(
        sessions[i]?.entries.slice(0, s.entries.length).map((e) => e.id),
      );
    }
  });

  it("gives one session the whole budget: its 100 entries with previews", () => {
    const entries = Array.from({ length: 100 }, () => entry({ request_prompt: text(32_768) }));
    const [fitted] = fitSessions([session(entries)], replyBudget(MAX_PAYLOAD)) ?? [];
    expect(fitted?.entries).toHaveLength(100);
    expect(fitted?.entries.every((e) => (e.request_prompt?.length ?? 0) > 8_000)).toBe(true);
  });

  it("cuts a session's model names of many kilobytes, and is undefined only when that is not enough", () => {
    const wide = { session_id: "s", models: ["gpt-4o", text(900_000)], entries: [entry()] };
    const [fitted] = fitSessions([wide, wide], 50_000) ?? [];
    expect(fitted?.models[0]).toBe("gpt-4o");
    expect(fitted?.models[1]?.endsWith(TRUNCATED_MARK)).toBe(true);
    expect(fitted?.entries).toEqual([]);
    expect(fitSessions([wide], 950_000)?.[0]?.entries).toHaveLength(1);
    const crowded = { ...wide, models: Array.from({ length: 5_000 }, (_, i) => `model-${i}`) };
    expect(fitSessions([crowded, crowded], 50_000)).toBeUndefined();
  });
});

describe("what the store reads", () => {
  it("reads no more of a text than an entry's share, and no more entries than a share holds", () => {
    expect(previewChars(replyBudget(MAX_PAYLOAD), 100)).toBe(Math.floor((MAX_PAYLOAD - 1024) / 100));
    expect(previewChars(0, 100)).toBe(1);
    expect(entriesWithin(replyBudget(MAX_PAYLOAD), 100)).toBe(100);
    expect(entriesWithin(Math.floor(replyBudget(MAX_PAYLOAD) / 100), 100)).toBe(20);
    expect(entriesWithin(10, 100)).toBe(1);
  });

  it("never takes an entry for smaller than its JSON without texts can be", () => {
    const emptiest = Object.fromEntries(
      Object.entries(entry()).map(([field, value]) => {
        if (typeof value === "string") return [field, ""];
        if (typeof value === "number") return [field, 0];
        return [field, Array.isArray(value) ? [] : value];
      }),
    );
    // A timestamp always takes its 24 characters (2025-03-10T12:00:00.000Z).
    expect(jsonBytes({ ...emptiest, timestamp: "2025-03-10T12:00:00.000Z" })).toBeGreaterThanOrEqual(
      ENTRY_BYTES_AT_LEAST,
    );
  });
});
