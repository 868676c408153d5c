import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuv";

/** A 20-character, URL-safe random id (base32 of 96 random bits), the shape NetBird's ids have. */
export function newId(): string {
  const bytes = randomBytes(12);
  let bits = 0;
  let value = 0;
  let id = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      id += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return bits > 0 ? id + ALPHABET[(value << (5 - bits)) & 31] : id;
}
