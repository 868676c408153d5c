/**
 * Exact money. Amounts are integer nano-USD (1e-9 USD) so that sums never drift; rates are
 * held as integer pico-USD per 1000 tokens so that a rate as small as $0.001 per million
 * tokens survives conversion. A JSON number such as 0.00015 is converted through its
 * shortest decimal text ("0.00015"), never by float multiplication, so the integer is the
 * decimal the operator typed.
 */

export const NANOS_PER_USD = 1_000_000_000;

/** Rates are scaled by 10^12: pico-USD per 1000 tokens. */
export const RATE_SCALE = 12;

/** tokens × pico-USD-per-1k is femto-USD (1e-15); this many femto-USD make one nano-USD. */
const FEMTO_PER_NANO = 1_000_000n;

/** `numerator / denominator` rounded half away from zero (denominator > 0). */
export const divRound = (numerator: bigint, denominator: bigint): bigint => {
  const half = denominator / 2n;
  return numerator >= 0n ? (numerator + half) / denominator : -((-numerator + half) / denominator);
};

/**
 * `value × 10^scale` as an exact integer, computed from the number's shortest decimal text
 * (which handles exponent notation such as "1.5e-7"), rounded half away from zero.
 */
export const decimalToScaled = (value: number, scale: number): bigint => {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite amount: ${value}`);
  const negative = value < 0;
  const [mantissa = "0", exponent = "0"] = Math.abs(value).toString().split("e");
  const [whole = "0", fraction = ""] = mantissa.split(".");
  const digits = BigInt(`${whole}${fraction}`);
  // |value| = digits × 10^(exponent − fraction.length)
  const shift = Number(exponent) - fraction.length + scale;
  const scaled = shift >= 0 ? digits * 10n ** BigInt(shift) : divRound(digits, 10n ** BigInt(-shift));
  return negative ? -scaled : scaled;
};

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

/** Narrows a bigint to a number, refusing anything a double cannot hold exactly. */
export const toSafeNumber = (value: bigint): number => {
  if (value > MAX_SAFE || value < MIN_SAFE) {
    throw new RangeError(`amount ${value} nano-USD is beyond exact number range (about $9 million)`);
  }
  return Number(value);
};

const PLAIN_USD = /^(-?)(\d+)(?:\.(\d{1,9}))?$/;

/** USD (a number) to integer nano-USD, rounded half away from zero. */
export const usdToNanos = (usd: number): number => {
  // Fast path for the common shape (at most 9 decimals, no exponent): integer arithmetic on the
  // decimal text is just as exact and avoids BigInt, which showed in the reservation profile.
  const plain = PLAIN_USD.exec(usd.toString());
  if (plain) {
    const nanos = Number(plain[2]) * NANOS_PER_USD + Number((plain[3] ?? "").padEnd(9, "0"));
    if (Number.isSafeInteger(nanos)) return plain[1] ? -nanos : nanos;
  }
  return toSafeNumber(decimalToScaled(usd, 9));
};

/** Integer nano-USD to USD: one correctly rounded division, so 1_050_000_000 gives exactly 1.05. */
export const nanosToUsd = (nanos: number | bigint): number => Number(nanos) / NANOS_PER_USD;

/**
 * Rates already converted: every request's cost converts its model's rates (twice with the
 * admission), and a provider's rates are a handful of numbers. Bounded, in case rates churn.
 */
const picosByRate = new Map<number, bigint>();
const MAX_REMEMBERED_RATES = 4096;

/** A per-1k USD rate as integer pico-USD per 1000 tokens. Negative rates are refused. */
export const rateToPicosPer1k = (ratePer1k: number): bigint => {
  let picos = picosByRate.get(ratePer1k);
  if (picos !== undefined) return picos;
  picos = decimalToScaled(ratePer1k, RATE_SCALE);
  if (picos < 0n) throw new RangeError(`negative rate: ${ratePer1k}`);
  if (picosByRate.size >= MAX_REMEMBERED_RATES) picosByRate.clear();
  picosByRate.set(ratePer1k, picos);
  return picos;
};

/** An exact multiplier of a rate (e.g. 8/5 for a 1-hour cache write over a 5-minute one). */
export interface RateMultiplier {
  numerator: bigint;
  denominator: bigint;
}

const ONE: RateMultiplier = { numerator: 1n, denominator: 1n };

/** Cost of `tokens` at a rate in pico-USD per 1k (times `multiplier`), in nano-USD, rounded half up once. */
export const tokenCostNanos = (
  tokens: number,
  picosPer1k: bigint,
  multiplier: RateMultiplier = ONE,
): bigint =>
  divRound(BigInt(tokens) * picosPer1k * multiplier.numerator, FEMTO_PER_NANO * multiplier.denominator);
