import type { z } from "zod";

export const codePoint = (code: number): string => `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * The first character a name or other display string may not hold, described, or undefined:
 * - C0 and C1 control characters and DEL (other than those in `allowed`): they break log lines
 *   and drive terminals;
 * - the bidirectional embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069: they
 *   reorder how the text around them is shown, so a name can display as another (CVE-2021-42574).
 *   The marks U+200E and U+200F stay allowed: right-to-left text needs them and they reorder nothing;
 * - lone surrogates: half of a UTF-16 pair is no character and has no UTF-8 encoding, so a store
 *   or a log would turn it into U+FFFD.
 *
 * Look-alikes from other scripts ("Аll" with a Cyrillic А) are allowed: names in Cyrillic, Greek
 * and other scripts are real, mixing scripts is common in product names, and only the account's
 * admins can name anything, so a look-alike fools no one they do not already control. Lists show
 * each resource with its id.
 */
export function forbiddenCharacter(text: string, allowed = ""): string | undefined {
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) {
      if (!allowed.includes(character)) return `control characters (${codePoint(code)})`;
    } else if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)) {
      return `bidirectional control characters (${codePoint(code)})`;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      return `lone surrogates (${codePoint(code)})`;
    }
  }
  return undefined;
}

/**
 * The refinement every display string shares: refuses what forbiddenCharacter finds, naming the
 * field. `allowed` lists control characters the field may hold (tab and line breaks in free text).
 */
export const displayText =
  (field: string, allowed = "") =>
  (text: string, ctx: z.RefinementCtx<string>): void => {
    const found = forbiddenCharacter(text, allowed);
    if (found) ctx.addIssue({ code: "custom", input: text, message: `${field} must not contain ${found}` });
  };
