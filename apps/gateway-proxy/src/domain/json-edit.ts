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
  /** Where the member's key starts, its value starts, and its value ends (exclusive). */
  start: number;
  valueStart: number;
  end: number;
  /** What the walk of its value found, for a member whose key was asked to be measured. */
  shape?: ValueShape;
}

/** How long a value's JSON is as JSON.stringify writes it, and how many object members it holds. */
export interface CanonicalValue {
  length: number;
  members: number;
}

/**
 * The top-level members among `keys` that the object's text writes as JSON.stringify writes their
 * values (the last, for a key sent twice), measured there: no whitespace outside strings, no `\u`
 * or `\/` escape, numbers only as integers of up to 15 digits. JSON.stringify writes such a value
 * at the same length (it may move integer-like keys first), but for an object's key sent twice
 * (JSON.parse keeps one): `members` counts the text's members so that a caller can compare them
 * with the parsed value's. Read in the walk that finds the members, at the cost of the values'
 * structure (a string is skipped whole), and one search for the escapes.
 */
export function canonicalValues(text: string, keys: ReadonlySet<string>): Map<string, CanonicalValue> {
  const found = new Map<string, CanonicalValue>();
  const scanned = scanMembers(text, keys);
  if (!scanned) return found;
  const escapes = new EscapeSearch(text);
  for (const { key, valueStart, end, shape } of scanned.members) {
    if (shape === undefined) continue;
    found.delete(key);
    if (shape.canonical && !escapes.within(valueStart, end)) {
      found.set(key, { length: end - valueStart, members: shape.members });
    }
  }
  return found;
}

/**
 * What a walk of a value saw outside its strings: its object members, and whether all of it is
 * written as JSON.stringify writes it (see canonicalValues).
 */
class ValueShape {
  members = 0;
  canonical = true;

  /** Reads the character `code`, after `digits` digits in a row; returns the digits in a row now. */
  read(code: number, digits: number): number {
    if (code >= ZERO && code <= NINE) {
      if (digits >= MAX_EXACT_DIGITS) this.canonical = false;
      return digits + 1;
    }
    if (code === COLON) this.members++;
    else if (code === MINUS || code === DOT || isWhitespace(code)) this.canonical = false;
    else if ((code === LOWER_E || code === UPPER_E) && digits > 0) this.canonical = false;
    return 0;
  }
}

/** Integers up to this many digits are written by JSON.stringify as they were read. */
const MAX_EXACT_DIGITS = 15;

/**
 * The escapes JSON.stringify never writes (`\u` but for control characters and lone surrogates,
 * which are left to the slow way too, and `\/`), found in stretches asked for in order: the text
 * is searched once. A `\\u` (an escaped backslash, then a `u`) matches too: such a value is
 * measured the slow way.
 */
class EscapeSearch {
  private static readonly pattern = /\\[u/]/g;
  /** The first escape at or after where the last search started; -1 before any search. */
  private next = -1;

  constructor(private readonly text: string) {}

  within(from: number, to: number): boolean {
    if (this.next < from) {
      EscapeSearch.pattern.lastIndex = from;
      this.next = EscapeSearch.pattern.exec(this.text)?.index ?? Number.POSITIVE_INFINITY;
    }
    return this.next < to;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const ZERO = 0x30;
const NINE = 0x39;
const MINUS = 0x2d;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

const isWhitespace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * The top-level members of a JSON object's text, which JSON.parse already accepted; undefined for
 * anything else. Strings are skipped whole (an `indexOf` to their closing quote), so a body is
 * walked at the cost of its structure, not of every character of its prompts.
 */
function scanMembers(
  text: string,
  measured?: ReadonlySet<string>,
): { open: number; members: Member[] } | undefined {
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
    const valueStart = skipWhitespace(text, at + 1);
    const shape = measured?.has(key) ? new ValueShape() : undefined;
    const end = valueEnd(text, valueStart, shape);
    members.push({ key, start, valueStart, end, shape });
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

/** Just past the value that starts at `from`; what is outside its strings read into `shape` if given. */
function valueEnd(text: string, from: number, shape?: ValueShape): number {
  let depth = 0;
  let at = from;
  let digits = 0;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (depth === 0) return at;
      digits = 0;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (depth === 0) return at;
      depth--;
      if (depth === 0) return at + 1;
    } else if (depth === 0 && (code === COMMA || isWhitespace(code))) return at;
    if (shape !== undefined) digits = shape.read(code, digits);
    at++;
  }
  return at;
}
