/**
 * Requests a proxy admitted whose event has not arrived yet, and when each proxy was last heard
 * of (a heartbeat or an admission). A proxy silent for `orphanAfterMs` is taken for dead: its
 * pending admissions are its orphans, and their admission events stand in for the events it never
 * published (docs/ARCHITECTURE.md, "Faults").
 *
 * An admission always arrives before its event is settled: the proxy publishes both on one
 * connection, the admission first, and the server delivers it to this subscriber before it stores
 * the event that settlement later pulls. So an id settled is never admitted afterwards.
 */
export class AdmissionWatch {
  private readonly pending = new Map<string, { proxyId: string; event: string }>();
  private readonly lastSeen = new Map<string, number>();
  /** Admissions dropped because too many were pending (a proxy publishing but never settling). */
  dropped = 0;

  constructor(
    private readonly options: {
      orphanAfterMs: number;
      /** Bounds memory: beyond it the oldest pending admission is forgotten (and counted). */
      maxPending: number;
    },
  ) {}

  get size(): number {
    return this.pending.size;
  }

  admitted(proxyId: string, requestId: string, event: string, now: number): void {
    this.lastSeen.set(proxyId, now);
    this.pending.set(requestId, { proxyId, event });
    while (this.pending.size > this.options.maxPending) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
      this.dropped++;
    }
  }

  heard(proxyId: string, now: number): void {
    this.lastSeen.set(proxyId, now);
  }

  /** After this replica could not hear anyone (its own reconnect, a new term): nobody is taken for dead before `now + orphanAfterMs`. */
  heardEveryone(now: number): void {
    for (const proxyId of this.lastSeen.keys()) this.lastSeen.set(proxyId, now);
  }

  /** Their events arrived: nothing to stand in for. */
  accounted(requestIds: Iterable<string>): void {
    for (const id of requestIds) this.pending.delete(id);
  }

  /** The admission events of proxies silent since `now - orphanAfterMs`; they are forgotten here. */
  orphans(now: number): string[] {
    const dead = new Set<string>();
    for (const [proxyId, seen] of this.lastSeen) {
      if (seen + this.options.orphanAfterMs <= now) dead.add(proxyId);
    }
    if (dead.size === 0) return [];
    const events: string[] = [];
    for (const [id, admission] of this.pending) {
      if (!dead.has(admission.proxyId)) continue;
      events.push(admission.event);
      this.pending.delete(id);
    }
    for (const proxyId of dead) this.lastSeen.delete(proxyId);
    return events;
  }
}
