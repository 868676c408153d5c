interface Step {
  at: number;
  order: number;
  run: () => void;
}

/** One turn of the event loop: every promise a step set going settles before the next step. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The simulation's only time: it moves from one scheduled step to the next, and after each step
 * every promise it set going settles before time moves on, so a `LeaseTable` awaiting a reply
 * resumes at the fake instant the reply arrived. Steps of one instant run in the order scheduled.
 */
export class FakeClock {
  private readonly steps: Step[] = [];
  private order = 0;

  constructor(public now: number) {}

  at(at: number, run: () => void) {
    const step = { at: Math.max(at, this.now), order: this.order++, run };
    let low = 0;
    let high = this.steps.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((this.steps[middle] as Step).at <= step.at) low = middle + 1;
      else high = middle;
    }
    this.steps.splice(low, 0, step);
  }

  after(ms: number, run: () => void) {
    this.at(this.now + ms, run);
  }

  /** Runs `run` every `ms` as long as `running()` says so, like a `setInterval` cleared then. */
  every(ms: number, running: () => boolean, run: () => void) {
    const tick = () => {
      run();
      if (running()) this.after(ms, tick);
    };
    this.after(ms, tick);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  /** Runs the steps due by `end` (all of them when `end` is infinite). */
  async runUntil(end: number) {
    for (let step = this.steps[0]; step && step.at <= end; step = this.steps[0]) {
      this.steps.shift();
      this.now = step.at;
      step.run();
      await turn();
    }
  }
}

/** A seeded generator (mulberry32): a schedule's seed replays its network's every decision. */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};
