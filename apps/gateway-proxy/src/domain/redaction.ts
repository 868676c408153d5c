/**
 * PII redaction of captured prompts and completions, before they leave the proxy. Pure and
 * conservative: a number is only a card when its Luhn check passes, an IBAN only when its mod-97
 * check passes, so order numbers and dates survive.
 */

type Rule = { label: string; pattern: RegExp; accept?: (match: string) => boolean };

const digitsOf = (text: string) => text.replace(/\D/g, "");

/** Luhn checksum of a card number (13 to 19 digits). */
export function luhnValid(number: string): boolean {
  const digits = digitsOf(number);
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** ISO 13616 check: move the first four characters to the end, letters to 10..35, mod 97 is 1. */
export function ibanValid(text: string): boolean {
  const iban = text.replace(/\s/g, "").toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= "A" ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** ISO dates (2024-05-01, 2024.05.01) look like numbers with separators but are not phones. */
const DATE = /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$/;

/** A phone number has 7 to 15 digits (E.164) and is written like one: a + or separators. */
const phoneLike = (match: string): boolean => {
  const count = digitsOf(match).length;
  if (count < 7 || count > 15 || DATE.test(match.trim())) return false;
  return match.startsWith("+") || /[\s().-]/.test(match.trim());
};

// Secrets first (they contain digits the card and phone rules would chew on), then emails, then
// the checksum-validated numbers, then phones on what is left.
const RULES: Rule[] = [
  { label: "SECRET", pattern: /\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}/g },
  { label: "SECRET", pattern: /\bagn_[A-Za-z0-9]{20,}/g },
  { label: "SECRET", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { label: "SECRET", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g },
  { label: "SECRET", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
  { label: "SECRET", pattern: /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g },
  { label: "SECRET", pattern: /(?<=\b[Bb]earer\s+)[A-Za-z0-9._~+/=-]{20,}/g },
  {
    label: "SECRET",
    pattern: /(?<=\b(?:api[_-]?key|secret|token|password|passwd)["']?\s*[:=]\s*["']?)[^\s"',;]{8,}/gi,
  },
  { label: "EMAIL", pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g },
  {
    label: "IBAN",
    pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g,
    accept: ibanValid,
  },
  { label: "CARD", pattern: /\b\d(?:[ -]?\d){12,18}\b/g, accept: luhnValid },
  {
    label: "PHONE",
    pattern: /(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]?\d{2,4}){1,4}(?!\w)/g,
    accept: phoneLike,
  },
];

/** Replaces every PII match with `[LABEL]`. */
export function redactPii(text: string): string {
  let result = text;
  for (const rule of RULES) {
    result = result.replace(rule.pattern, (match) =>
      rule.accept === undefined || rule.accept(match) ? `[${rule.label}]` : match,
    );
  }
  return result;
}
