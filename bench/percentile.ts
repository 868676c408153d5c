/**
 * The nearest-rank percentile `q` (0 < q ≤ 1) of samples sorted ascending: the smallest sample
 * that at least a `q` share of them do not exceed. Of 20 samples, p95 is the second largest, not
 * the largest.
 */
export const percentile = (sorted: ArrayLike<number>, q: number): number =>
  sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? 0;
