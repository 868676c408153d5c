import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuv";
const ID_BYTES = 12;
/** Entropy is drawn for this many ids at once: one `randomBytes` call per id showed in the reservation profile. */
const POOL_IDS = 256;

let pool = Buffer.alloc(0);
let offset = 0;

/** A 20-character, URL-safe random id (base32 of 96 random bits), the shape NetBird's ids have. */
export function newId(): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(ID_BYTES * POOL_IDS);
    offset = 0;
  }
  let bits = 0;
  let value = 0;
  let id = "";
  for (let i = offset; i < offset + ID_BYTES; i++) {
    value = (value << 8) | (pool[i] ?? 0);
    bits += 8;
    while (bits >= 5) {
      id += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  offset += ID_BYTES;
  return bits > 0 ? id + ALPHABET[(value << (5 - bits)) & 31] : id;
}
