import { AppError, Consumption } from "@agentnet/contracts";
import type { NatsConnection } from "@nats-io/transport-node";
import { Histogram, type Registry } from "prom-client";

/** From half a millisecond (a cached answer on loopback) to the 10 s default request timeout. */
const BUS_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type BusLabel = "subject" | "code";

/**
 * A leadership term's lease subject (`agn.consumption.lease.<term>`) counts under its endpoint's
 * subject: every other subject is a catalog entry, and terms would add a series per failover.
 */
const TERM_LEASE_PREFIX = `${Consumption.lease.subject}.`;
const subjectLabel = (subject: string): string =>
  subject.startsWith(TERM_LEASE_PREFIX) ? Consumption.lease.subject : subject;

/** The status an outcome stands for: 200 for a reply, an AppError's own (503 no responders, 504 timeout), else 500. */
const codeOf = (error: unknown): number => (error instanceof AppError ? error.status : 500);

/** One histogram's series, bound once per (subject, code): observing hashes no labels. */
class SubjectTimings {
  private readonly series = new Map<string, Map<number, Histogram.Internal<BusLabel>>>();

  constructor(private readonly histogram: Histogram<BusLabel>) {}

  observe(subject: string, code: number, started: number): void {
    const label = subjectLabel(subject);
    let byCode = this.series.get(label);
    if (!byCode) {
      byCode = new Map();
      this.series.set(label, byCode);
    }
    let series = byCode.get(code);
    if (!series) {
      series = this.histogram.labels({ subject: label, code: String(code) });
      byCode.set(code, series);
    }
    series.observe((performance.now() - started) / 1000);
  }
}

/** How long requests over one connection take, asked (`request`) and answered (`serve`). */
export class BusMetrics {
  private readonly requests: SubjectTimings;
  private readonly handlers: SubjectTimings;

  constructor(registry: Registry) {
    this.requests = new SubjectTimings(
      new Histogram({
        name: "agentnet_bus_request_duration_seconds",
        help: "Requests this service made over NATS, from sending to the parsed reply, by subject and outcome (200, or the error's status: 503 nobody answers, 504 timeout)",
        labelNames: ["subject", "code"],
        buckets: BUS_SECONDS_BUCKETS,
        registers: [registry],
      }),
    );
    this.handlers = new SubjectTimings(
      new Histogram({
        name: "agentnet_bus_handler_duration_seconds",
        help: "Requests this service answered over NATS, from receiving to replying, by subject and outcome (200, or the error's status)",
        labelNames: ["subject", "code"],
        buckets: BUS_SECONDS_BUCKETS,
        registers: [registry],
      }),
    );
  }

  /** `reply` as it is, timed from `started` (`performance.now()`) to when it settles. */
  requested<T>(subject: string, started: number, reply: Promise<T>): Promise<T> {
    return reply.then(
      (value) => {
        this.requests.observe(subject, 200, started);
        return value;
      },
      (error: unknown) => {
        this.requests.observe(subject, codeOf(error), started);
        throw error;
      },
    );
  }

  answered(
    subject: string,
    started: number,
    envelope: { ok: true } | { ok: false; error: { status: number } },
  ) {
    this.handlers.observe(subject, envelope.ok ? 200 : envelope.error.status, started);
  }
}

const measured = new WeakMap<NatsConnection, BusMetrics>();

/**
 * Times the requests made and answered over `nc` in `registry` (the service's own: services
 * sharing a process keep theirs apart); undefined (metrics off) leaves it untimed.
 */
export function useBusMetrics(nc: NatsConnection, registry: Registry | undefined): void {
  if (registry) measured.set(nc, new BusMetrics(registry));
}

/** The metrics of `nc`, undefined when it is not timed. */
export const busMetricsOf = (nc: NatsConnection): BusMetrics | undefined => measured.get(nc);
