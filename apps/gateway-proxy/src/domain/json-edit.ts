import type { JsonObject } from "./json";

/**
 * The caller's JSON object, as the UTF-8 bytes it sent (`bytes`, whose text is `text`), with only
 * the top-level members the proxy changed written anew: `original` is the parsed text, `edited` a
 * shallow copy of it after the edits (edits replace top-level values, never change them in place).
 * Every other member keeps the caller's bytes, in the caller's order: vendors' prompt caches match
 * on the prompt as sent, and re-serialising the whole body moves integer-like keys first
 * (`{"b":1,"2":0}` becomes `{"2":0,"b":1}`), rounds integers beyond 2^53, and rewrites escapes. A
 * removed member goes, a changed one is written where it was (once, if the caller sent the key
 * twice), a new one is appended. The kept stretches are cut from `bytes`, only what was edited is
 * encoded: encoding the whole edited text again took 150–340 µs for a coding agent's 263 KB body.
 */
export function editedJsonBytes(
  text: string,
  bytes: Buffer,
  original: JsonObject,
  edited: JsonObject,
): Buffer {
  const pieces = editedPieces(text, original, edited);
  if (pieces === UNEDITED) return bytes;
  // Every character of an ASCII text is one byte; otherwise offsets are counted as spans come (in order).
  const ascii = bytes.length === text.length;
  let chars = 0;
  let byteOffset = 0;
  const byteAt = (at: number) => {
    if (ascii) return at;
    byteOffset += Buffer.byteLength(text.slice(chars, at));
    chars = at;
    return byteOffset;
  };
  const parts: Buffer[] = [];
  for (const piece of pieces) {
    if (typeof piece === "string") parts.push(Buffer.from(piece));
    else parts.push(bytes.subarray(byteAt(piece.start), byteAt(piece.end)));
  }
  return Buffer.concat(parts);
}

/** A stretch of the caller's text kept as it is. */
interface Span {
  start: number;
  end: number;
}

/** The edited text as stretches of the caller's (in their order) and new text between them. */
type Pieces = (Span | string)[];

const UNEDITED: Pieces = [];

/** Spans of the caller's text and new text, a span that continues the one before joined to it. */
class PieceList {
  readonly pieces: Pieces = [];

  keep(start: number, end: number): void {
    if (end <= start) return;
    const last = this.pieces[this.pieces.length - 1];
    if (last !== undefined && typeof last !== "string" && last.end === start) last.end = end;
    else this.pieces.push({ start, end });
  }

  write(text: string): void {
    this.pieces.push(text);
  }
}

/** What `editedJsonBytes` writes, as pieces of `text`; `UNEDITED` when it is the text itself. */
function editedPieces(text: string, original: JsonObject, edited: JsonObject): Pieces {
  const originalKeys = Object.keys(original);
  const editedKeys = Object.keys(edited);
  let edits = false;
  for (const key of originalKeys) {
    if (edited[key] !== original[key] || !isKept(edited, key)) {
      edits = true;
      break;
    }
  }
  const added: string[] = [];
  if (editedKeys.length !== originalKeys.length || edits) {
    for (const key of editedKeys) {
      if (edited[key] !== undefined && !Object.hasOwn(original, key)) added.push(key);
    }
  }
  if (!edits && added.length === 0) return UNEDITED;
  if (!edits) return withAppended(text, originalKeys.length > 0, added, edited);
  const scanned = scanMembers(text);
  if (!scanned) return [JSON.stringify(edited)];
  const { members, open } = scanned;
  const first = members[0];
  const out = new PieceList();
  // The caller's separators: the whitespace after `{` before the first member written, the comma
  // and whitespace before each other one.
  out.keep(0, first ? first.start : open + 1);
  let emitted = 0;
  let written: Set<string> | undefined;
  for (let index = 0; index < members.length; index++) {
    const member = members[index] as Member;
    const { key } = member;
    if (!isKept(edited, key)) continue;
    const same = edited[key] === original[key];
    if (!same && written?.has(key)) continue;
    if (emitted > 0) out.keep((members[index - 1] as Member).end, member.start);
    if (same) out.keep(member.start, member.end);
    else {
      written ??= new Set();
      written.add(key);
      out.write(`${JSON.stringify(key)}:${JSON.stringify(edited[key])}`);
    }
    emitted++;
  }
  for (const key of added) {
    out.write(`${emitted === 0 ? "" : ","}${JSON.stringify(key)}:${JSON.stringify(edited[key])}`);
    emitted++;
  }
  const last = members[members.length - 1];
  out.keep(last ? last.end : open + 1, text.length);
  return out.pieces;
}

/**
 * The text with new members before its closing brace: the most common edit (a stream's
 * `stream_options`, the end-user metadata), made without walking the body.
 */
function withAppended(
  text: string,
  hasMembers: boolean,
  added: readonly string[],
  edited: JsonObject,
): Pieces {
  // Right after the last member (or `{`), as a member is written: the caller's whitespace stays before `}`.
  let at = text.lastIndexOf("}");
  while (at > 0 && isWhitespace(text.charCodeAt(at - 1))) at--;
  let members = "";
  for (const [index, key] of added.entries()) {
    members += `${hasMembers || index > 0 ? "," : ""}${JSON.stringify(key)}:${JSON.stringify(edited[key])}`;
  }
  return [{ start: 0, end: at }, members, { start: at, end: text.length }];
}

/** A member the edits kept (a value of `undefined` is no member: JSON.stringify leaves it out). */
const isKept = (edited: JsonObject, key: string) => edited[key] !== undefined && Object.hasOwn(edited, key);

interface Member {
  key: string;
  /** Where the member's key starts and its value ends (exclusive). */
  start: number;
  end: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isWhitespace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * The top-level members of a JSON object's text, which JSON.parse already accepted; undefined for
 * anything else. Strings are skipped whole (an `indexOf` to their closing quote), so a body is
 * walked at the cost of its structure, not of every character of its prompts.
 */
function scanMembers(text: string): { open: number; members: Member[] } | undefined {
  let at = skipWhitespace(text, 0);
  if (text.charCodeAt(at) !== OPEN_BRACE) return undefined;
  const open = at;
  const members: Member[] = [];
  at = skipWhitespace(text, at + 1);
  if (text.charCodeAt(at) === CLOSE_BRACE) return { open, members };
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) return undefined;
    const start = at;
    const keyEnd = stringEnd(text, at);
    const raw = text.slice(at + 1, keyEnd - 1);
    // Most keys have no escape: read as they stand; JSON.parse decodes the others.
    const key: unknown = raw.includes("\\") ? JSON.parse(text.slice(at, keyEnd)) : raw;
    if (typeof key !== "string") return undefined;
    at = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(at) !== COLON) return undefined;
    const end = valueEnd(text, skipWhitespace(text, at + 1));
    members.push({ key, start, end });
    at = skipWhitespace(text, end);
    const next = text.charCodeAt(at);
    if (next === CLOSE_BRACE) return { open, members };
    if (next !== COMMA) return undefined;
    at = skipWhitespace(text, at + 1);
  }
}

function skipWhitespace(text: string, from: number): number {
  let at = from;
  while (at < text.length && isWhitespace(text.charCodeAt(at))) at++;
  return at;
}

/** Just past the string whose opening quote is at `from`. */
function stringEnd(text: string, from: number): number {
  let at = from + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/** Just past the value that starts at `from`. */
function valueEnd(text: string, from: number): number {
  let depth = 0;
  let at = from;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (depth === 0) return at;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (depth === 0) return at;
      depth--;
      if (depth === 0) return at + 1;
    } else if (depth === 0 && (code === COMMA || isWhitespace(code))) return at;
    at++;
  }
  return at;
}
