import type { AccessLogEntryView } from "@agentnet/contracts";

/*
 * Every telemetry answer is one NATS message, and the server takes none larger than its
 * max_payload (1 MiB by default). Captured prompts and completions are up to 32,768 characters
 * each, so 40 captured requests already outweigh a page: a page must fit by construction, whatever
 * its entries hold. The items of a reply share its budget in order, each an equal part of what is
 * left, so an item that needs less leaves the rest to those after it. Within an entry the
 * captured texts give way first: they are cut from the end and flagged, and the whole entry is one
 * read away (`GET /access-logs/{logId}`). Only an entry whose other free text alone outgrows its
 * share (a model name of many kilobytes: the proxy cuts an event only to what NATS carries) has
 * that cut too, marked as the proxy marks it, so one such request cannot make a page unreadable.
 */

/**
 * What a reply spends besides its items: `{"ok":true,"data":…}` and a page's page, page_size,
 * total_records and total_pages take under 200 bytes; 1 KiB is kept for them.
 */
const REPLY_RESERVE_BYTES = 1024;

/** Bytes the items of a reply may take in all. */
export const replyBudget = (maxPayload: number): number => Math.max(0, maxPayload - REPLY_RESERVE_BYTES);

/** UTF-8 bytes of a value's JSON, as it travels. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/**
 * Code points of each captured text a list reads from the store for items sharing `budget`: a text
 * longer than its item's share could not travel whole anyway (every code point takes at least a
 * byte), so more would only be cut again. At least one, so a captured text is never read as empty.
 */
export const previewChars = (budget: number, items: number): number =>
  Math.max(1, Math.floor(budget / Math.max(1, items)));

/**
 * An entry's JSON without its texts never takes fewer bytes: its field names alone take more
 * (reply-budget.test.ts checks). So a share of `n` times this holds at most `n` entries.
 */
export const ENTRY_BYTES_AT_LEAST = 512;

/** How many of a session's first entries (at most `max`) could travel in `share` bytes; at least one. */
export const entriesWithin = (share: number, max: number): number =>
  Math.max(1, Math.min(max, Math.floor(share / ENTRY_BYTES_AT_LEAST)));

const SHORT_ESCAPES = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

/**
 * The longest prefix of `text` whose JSON string form takes at most `budget` bytes between its
 * quotes, counted as JSON.stringify writes it and UTF-8 carries it: `"` and `\` and \b \t \n \f \r
 * take 2, other control characters and lone surrogates 6 (\uXXXX), a surrogate pair 4, the rest
 * 1 to 3. A surrogate pair is never split.
 */
export function prefixWithin(text: string, budget: number): string {
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let bytes = 3;
    let units = 1;
    if (code === 0x22 || code === 0x5c) bytes = 2;
    else if (code < 0x20) bytes = SHORT_ESCAPES.has(code) ? 2 : 6;
    else if (code < 0x80) bytes = 1;
    else if (code < 0x800) bytes = 2;
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      const pair = code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
      bytes = pair ? 4 : 6;
      units = pair ? 2 : 1;
    }
    if (used + bytes > budget) return text.slice(0, i);
    used += bytes;
    i += units - 1;
  }
  return text;
}

/** Ends a field cut to fit, as the gateway proxy ends what it cut to publish an event. */
export const TRUNCATED_MARK = "…[truncated]";
const MARK_BYTES = jsonBytes(TRUNCATED_MARK) - 2;

/**
 * The values cut, longest first so the fewest are touched and each marked, until they take
 * `excess` bytes less; `excess` is what is still over (above 0 when cutting them all was not
 * enough). A value no longer than the mark is left as it is.
 */
export function shortenLongest(
  values: readonly string[],
  excess: number,
): { values: string[]; excess: number } {
  const shortened = [...values];
  const longestFirst = shortened
    .map((value, i) => ({ i, bytes: jsonBytes(value) - 2 }))
    .sort((a, b) => b.bytes - a.bytes);
  let over = excess;
  for (const { i, bytes } of longestFirst) {
    if (over <= 0 || bytes <= MARK_BYTES) break;
    const cut = `${prefixWithin(shortened[i] ?? "", Math.max(0, bytes - over - MARK_BYTES))}${TRUNCATED_MARK}`;
    over -= bytes - (jsonBytes(cut) - 2);
    shortened[i] = cut;
  }
  return { values: shortened, excess: over };
}

/** Free-text fields of an entry besides its texts that a request can make long (the proxy's too). */
const LONG_FIELDS = ["model", "path", "host", "session_id", "source_ip"] as const;

const TEXTS = [
  { text: "request_prompt", flag: "request_prompt_truncated" },
  { text: "response_completion", flag: "response_completion_truncated" },
] as const;

/**
 * The entry within `budget` bytes of JSON: its captured texts cut from the end, each one cut
 * flagged, the shorter text keeping up to half of the room and the other the rest; when the entry
 * does not fit even with them empty, its long free-text fields are cut too (`shortenLongest`).
 * Lists and ids are never cut, so it can still take more than `budget`; `bytes` says what it takes.
 */
export function fitEntry(
  entry: AccessLogEntryView,
  budget: number,
): { entry: AccessLogEntryView; bytes: number } {
  const whole = jsonBytes(entry);
  if (whole <= budget) return { entry, bytes: whole };
  const texts = TEXTS.flatMap(({ text, flag }) => {
    const value = entry[text];
    return value === undefined ? [] : [{ text, flag, value, bytes: jsonBytes(value) - 2 }];
  });
  // Room is counted against the entry with empty texts, each flagged: what it takes at least.
  const bare: AccessLogEntryView = { ...entry };
  for (const { text, flag } of texts) {
    bare[text] = "";
    bare[flag] = true;
  }
  let room = budget - jsonBytes(bare);
  const fitted: AccessLogEntryView = { ...entry };
  texts.sort((a, b) => a.bytes - b.bytes);
  for (const [i, { text, flag, value }] of texts.entries()) {
    const kept = prefixWithin(value, Math.max(0, Math.floor(room / (texts.length - i))));
    room -= jsonBytes(kept) - 2;
    fitted[text] = kept;
    if (kept.length < value.length) fitted[flag] = true;
  }
  const bytes = jsonBytes(fitted);
  if (bytes <= budget) return { entry: fitted, bytes };
  const { values } = shortenLongest(
    LONG_FIELDS.map((field) => fitted[field]),
    bytes - budget,
  );
  for (const [i, field] of LONG_FIELDS.entries()) fitted[field] = values[i] ?? "";
  return { entry: fitted, bytes: jsonBytes(fitted) };
}

/**
 * The first entries, in order, within `budget` bytes of a JSON array's items (commas counted):
 * each fitted to an equal share of what is left. It stops before the first entry that does not fit
 * in what is left even with its texts emptied, so the result is a prefix of `entries`.
 */
export function fitEntries(
  entries: readonly AccessLogEntryView[],
  budget: number,
): { entries: AccessLogEntryView[]; bytes: number } {
  const fitted: AccessLogEntryView[] = [];
  let room = budget;
  for (const [i, entry] of entries.entries()) {
    const share = Math.floor(room / (entries.length - i));
    const { entry: cut, bytes } = fitEntry(entry, share - 1);
    if (bytes + 1 > room) break;
    fitted.push(cut);
    room -= bytes + 1;
  }
  return { entries: fitted, bytes: budget - room };
}

/**
 * Sessions within `budget` bytes, in order: each gets an equal share of what is left, and within
 * it the first of its entries that fit (`fitEntries`). A session whose own fields outgrow its share
 * keeps no entries and has its longest model names cut (`shortenLongest`). Undefined when even the
 * sessions so cut, without entries, do not fit.
 */
export function fitSessions<S extends { models: string[]; entries: AccessLogEntryView[] }>(
  sessions: readonly S[],
  budget: number,
): S[] | undefined {
  const fitted: S[] = [];
  let room = budget;
  for (const [i, session] of sessions.entries()) {
    const share = Math.floor(room / (sessions.length - i));
    let bare = { ...session, entries: [] };
    if (jsonBytes(bare) > share - 1) {
      bare = { ...bare, models: shortenLongest(session.models, jsonBytes(bare) - share + 1).values };
    }
    const bareBytes = jsonBytes(bare);
    const { entries, bytes } = fitEntries(session.entries, share - bareBytes - 1);
    const cost = bareBytes + bytes + 1;
    if (cost > room) return undefined;
    fitted.push({ ...bare, entries });
    room -= cost;
  }
  return fitted;
}
