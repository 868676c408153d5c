import type { JsonObject } from "./json";

/**
 * The caller's JSON object text with only the top-level members the proxy changed written anew:
 * `original` is the parsed text, `edited` a shallow copy of it after the edits (edits replace
 * top-level values, never change them in place). Every other member keeps the
 * caller's bytes, in the caller's order: vendors' prompt caches match on the prompt as sent, and
 * re-serialising the whole body moves integer-like keys first (`{"b":1,"2":0}` becomes
 * `{"2":0,"b":1}`), rounds integers beyond 2^53, and rewrites escapes. A removed member goes, a
 * changed one is written where it was (once, if the caller sent the key twice), a new one is
 * appended.
 */
export function editedJsonText(text: string, original: JsonObject, edited: JsonObject): string {
  const removed = (key: string) => !Object.hasOwn(edited, key) || edited[key] === undefined;
  const changed = (key: string) => !removed(key) && edited[key] !== original[key];
  const originalKeys = Object.keys(original);
  const added = Object.keys(edited).filter(
    (key) => !Object.hasOwn(original, key) && edited[key] !== undefined,
  );
  if (added.length === 0 && !originalKeys.some((key) => removed(key) || changed(key))) return text;
  const scanned = scanMembers(text);
  if (!scanned) return JSON.stringify(edited);
  const { members, open } = scanned;
  let out = text.slice(0, open + 1);
  let emitted = 0;
  const written = new Set<string>();
  members.forEach((member, index) => {
    const { key } = member;
    let value: string;
    if (removed(key)) return;
    if (!changed(key)) value = text.slice(member.start, member.end);
    else if (written.has(key)) return;
    else {
      written.add(key);
      value = `${JSON.stringify(key)}:${JSON.stringify(edited[key])}`;
    }
    // The caller's separators: the whitespace after `{` before the first member, the comma and
    // whitespace before the others.
    const before = index === 0 ? open + 1 : (members[index - 1] as Member).end;
    const gap = text.slice(before, member.start);
    const leading = text.slice(open + 1, (members[0] as Member).start);
    out += emitted === 0 ? leading : index === 0 ? "," : gap;
    out += value;
    emitted++;
  });
  for (const key of added) {
    out += `${emitted === 0 ? "" : ","}${JSON.stringify(key)}:${JSON.stringify(edited[key])}`;
    emitted++;
  }
  const last = members[members.length - 1];
  return out + text.slice(last ? last.end : open + 1);
}

interface Member {
  key: string;
  /** Where the member's key starts and its value ends (exclusive). */
  start: number;
  end: number;
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

/**
 * The top-level members of a JSON object's text, which JSON.parse already accepted; undefined for
 * anything else. Strings are skipped whole (an `indexOf` to their closing quote), so a body is
 * walked at the cost of its structure, not of every character of its prompts.
 */
function scanMembers(text: string): { open: number; members: Member[] } | undefined {
  let at = skipWhitespace(text, 0);
  if (text[at] !== "{") return undefined;
  const open = at;
  const members: Member[] = [];
  at = skipWhitespace(text, at + 1);
  if (text[at] === "}") return { open, members };
  for (;;) {
    if (text[at] !== '"') return undefined;
    const start = at;
    const keyEnd = stringEnd(text, at);
    const key: unknown = JSON.parse(text.slice(at, keyEnd));
    if (typeof key !== "string") return undefined;
    at = skipWhitespace(text, keyEnd);
    if (text[at] !== ":") return undefined;
    const end = valueEnd(text, skipWhitespace(text, at + 1));
    members.push({ key, start, end });
    at = skipWhitespace(text, end);
    if (text[at] === "}") return { open, members };
    if (text[at] !== ",") return undefined;
    at = skipWhitespace(text, at + 1);
  }
}

function skipWhitespace(text: string, from: number): number {
  let at = from;
  while (at < text.length && WHITESPACE.has(text[at] as string)) at++;
  return at;
}

/** Just past the string whose opening quote is at `from`. */
function stringEnd(text: string, from: number): number {
  let at = from + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text[quote - 1 - backslashes] === "\\") backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/** Just past the value that starts at `from`. */
function valueEnd(text: string, from: number): number {
  let depth = 0;
  let at = from;
  while (at < text.length) {
    const char = text[at];
    if (char === '"') {
      at = stringEnd(text, at);
      if (depth === 0) return at;
      continue;
    }
    if (char === "{" || char === "[") depth++;
    else if (char === "}" || char === "]") {
      if (depth === 0) return at;
      depth--;
      if (depth === 0) return at + 1;
    } else if (depth === 0 && (char === "," || WHITESPACE.has(char as string))) return at;
    at++;
  }
  return at;
}
