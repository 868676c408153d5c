import { z } from "zod";
import { codePoint } from "./text";

/**
 * The first control character (C0, DEL, C1) or whitespace (`\s`: ASCII and Unicode spaces, line
 * and paragraph separators, the byte order mark) of a URL's text, as U+XXXX, or undefined.
 */
function unparsedCharacter(text: string): string | undefined {
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f) || /\s/u.test(character)) return codePoint(code);
  }
  return undefined;
}

/**
 * An absolute URL whose scheme matches `protocol` (refused with `error` otherwise), as every URL the
 * API stores is written. The WHATWG URL parser drops tab, CR and LF wherever they are, trims
 * controls and spaces at the ends and percent-encodes the rest, so text holding any of them is not
 * what the parser reads: stored, it would be shown and compared as one URL and reached as another.
 * Such text is refused before any other rule, and alone: zod's URL check strips some of them from
 * the value, so the rules after it would judge a URL that was never sent.
 */
export const absoluteUrl = (protocol: RegExp, error: string) =>
  z
    .string()
    .superRefine((text, ctx) => {
      const found = unparsedCharacter(text);
      if (found)
        ctx.addIssue({
          code: "custom",
          message: `must not contain whitespace or control characters (${found})`,
          continue: false,
        });
    })
    .check(z.url({ protocol, error }));
