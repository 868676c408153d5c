/**
 * What a proxy's lease table knows of its connection to the bus: whether an ask can leave at all,
 * and whether the bus was lost since a leader last answered, in which case the leases ride out the
 * outage on their grace instead of running out with their TTL.
 */
export class BusWatch {
  private lostSinceLeaderAnswered = false;
  private connectedNow = true;
  /** Questions to the bus still waiting for its answer: a lost bus answers them all "no". */
  private readonly awaiting = new Set<() => void>();

  /** `answers`: resolves once the bus answers a PING sent now, rejects if the connection drops first. */
  constructor(private readonly answers: () => Promise<void>) {}

  /** From a lost bus until a leader answers again. */
  get inOutage(): boolean {
    return this.lostSinceLeaderAnswered;
  }

  /** False from a lost connection until it is back: an ask could not leave, so none is sent. */
  get connected(): boolean {
    return this.connectedNow;
  }

  lost() {
    this.lostSinceLeaderAnswered = true;
    this.connectedNow = false;
    for (const answerNo of this.awaiting) answerNo();
    this.awaiting.clear();
  }

  reconnected() {
    this.connectedNow = true;
  }

  leaderAnswered() {
    this.lostSinceLeaderAnswered = false;
  }

  /**
   * Whether the bus answers now: false once the connection is lost, whichever comes first, the
   * drop of the PING or the report of the loss (a PING that failed is a lost connection too).
   */
  stillAnswers(): Promise<boolean> {
    if (!this.connectedNow) return Promise.resolve(false);
    return new Promise((resolve) => {
      const answerNo = () => resolve(false);
      this.awaiting.add(answerNo);
      this.answers().then(
        () => {
          this.awaiting.delete(answerNo);
          resolve(true);
        },
        () => {
          this.awaiting.delete(answerNo);
          this.lost();
          resolve(false);
        },
      );
    });
  }
}
