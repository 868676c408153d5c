/** Slices per horizon: each slice's table holds ~1/32 of the keys, so growing it is cheap. */
const SLICES = 32;

interface Slice {
  /** When its first key was added (ms); a new slice starts once this one spans horizon / SLICES. */
  start: number;
  /** Its latest addition (ms): the slice is dropped once that is past the horizon. */
  last: number;
  keys: Map<string, number>;
}

/**
 * Keys remembered for `horizonMs` after they were added (a key counts while `at + horizonMs > now`),
 * kept in time slices. One Map of every key stalled the event loop it shares with reservation
 * replies: growing a table rehashes all of its entries at once (25 ms at 131,072 string keys,
 * 49 ms at 262,144), and forgetting old keys walked all of them (111 ms over 600,000), while at
 * 2,000 requests/s two minutes of keys are 240,000. Here no operation touches more than one slice,
 * and forgetting drops whole slices.
 */
export class RecentKeys {
  private readonly slices: Slice[] = [];
  private readonly sliceMs: number;

  constructor(private readonly horizonMs: number) {
    this.sliceMs = Math.max(1, Math.ceil(horizonMs / SLICES));
  }

  add(key: string, at: number) {
    let newest = this.slices.at(-1);
    if (!newest || at >= newest.start + this.sliceMs) {
      this.forget(at);
      newest = { start: at, last: at, keys: new Map() };
      this.slices.push(newest);
    }
    newest.keys.set(key, at);
    newest.last = Math.max(newest.last, at);
  }

  /** Whether `key` was added within the horizon before `now` (its latest addition counts). */
  has(key: string, now: number): boolean {
    for (let i = this.slices.length - 1; i >= 0; i--) {
      const at = this.slices[i]?.keys.get(key);
      if (at !== undefined) return at + this.horizonMs > now;
    }
    return false;
  }

  /** Drops the slices whose every key is past the horizon at `now`. */
  forget(now: number) {
    let expired = 0;
    for (const slice of this.slices) {
      if (slice.last + this.horizonMs > now) break;
      expired++;
    }
    this.slices.splice(0, expired);
  }
}
