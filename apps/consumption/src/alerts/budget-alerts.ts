import { type NatsConnection, publishEvent, request, type Subscription } from "@agentnet/bus";
import { type Counter, chainId, outcomeOfEvent } from "@agentnet/caps";
import {
  type AlertMessage,
  AlertSubjects,
  type AlertWatch,
  type Caller,
  Events,
  type GatewayRequestEvent,
  Notifications,
} from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import { capStatuses } from "../domain/cap-status";
import { thresholdCrossings } from "../domain/threshold-crossings";

export interface BudgetAlertOptions {
  /** How often the callers of settled requests are looked at. */
  intervalMs: number;
  /** How long an account's watch list serves before it is asked for again (a change drops it at once). */
  watchTtlMs: number;
  clock: () => number;
}

export const defaultBudgetAlertOptions: BudgetAlertOptions = {
  intervalMs: 1_000,
  watchTtlMs: 60_000,
  clock: Date.now,
};

/** Callers waiting to be looked at, at most: about the distinct users settling in one interval. */
const MAX_PENDING_CALLERS = 100_000;

type WatchedCaller = Pick<Caller, "account_id" | "user_id" | "group_ids">;

interface Pending {
  /** The caller and the windows its requests counted in: one look covers every request of both. */
  key: string;
  caller: WatchedCaller;
  /** When the request started: its caps are looked at in the windows it counted in. */
  atMs: number;
}

/**
 * The leader's watch on caps: settlement says whose usage it counted (`settled`, a map insert per
 * event, nothing more), and every `intervalMs`, off the settle path, the caps of those callers are
 * compared with their accounts' thresholds. A threshold reached becomes a `budget.threshold_crossed`
 * alert on `agn.alerts.budget.<account>`. The leader remembers what it published so as not to
 * publish it again; after a restart or a change of leader it may publish an alert again once, and
 * the notifier, which records every alert by its key, drops the repeat.
 */
export class BudgetAlerts {
  /** account → caller and windows → the caller, by what their requests counted on. */
  private readonly pending = new Map<string, Map<string, Pending>>();
  private pendingCount = 0;
  private readonly watches = new Map<string, { watch: AlertWatch; fetchedAt: number }>();
  /** Alert keys published this term → when their window ends (ms): nothing can cross it after. */
  private readonly published = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private changes: Subscription | undefined;
  private running: Promise<void> | undefined;
  private unreachableLogged = false;

  constructor(
    private readonly deps: {
      nc: NatsConnection;
      logger: Logger;
      counters: { list(accountId: string): Counter[] };
      options: BudgetAlertOptions;
    },
  ) {}

  start() {
    this.changes = this.deps.nc.subscribe(Events.configChangedAll, {
      callback: (error, msg) => {
        if (!error) this.watches.delete(msg.subject.slice(Events.configChanged("").length));
      },
    });
    this.timer = setInterval(() => {
      this.running ??= this.look().finally(() => {
        this.running = undefined;
      });
    }, this.deps.options.intervalMs);
    this.timer.unref();
  }

  async stop() {
    clearInterval(this.timer);
    this.changes?.unsubscribe();
    await this.running;
  }

  /** A batch was settled: note whose caps it moved (accounts known to watch nothing are skipped). */
  settled(events: readonly GatewayRequestEvent[]) {
    const now = this.deps.options.clock();
    for (const event of events) {
      const counters = event.reserved_counters;
      if (!counters || counters.length === 0 || outcomeOfEvent(event) === "released") continue;
      const cached = this.watches.get(event.account_id);
      if (cached && cached.watch.thresholds.length === 0 && this.fresh(cached, now)) continue;
      if (this.pendingCount >= MAX_PENDING_CALLERS) return;
      let key = event.user_id;
      for (const group of event.group_ids) key += `,${group}`;
      for (const counter of counters) key += `|${counter.window_start}`;
      if (this.pending.get(event.account_id)?.has(key)) continue;
      this.enqueue(event.account_id, {
        key,
        caller: { account_id: event.account_id, user_id: event.user_id, group_ids: event.group_ids },
        atMs: Date.parse(event.timestamp),
      });
    }
  }

  private async look() {
    const now = this.deps.options.clock();
    for (const [key, windowEnd] of this.published) if (windowEnd <= now) this.published.delete(key);
    for (const [accountId, cached] of this.watches)
      if (!this.fresh(cached, now)) this.watches.delete(accountId);
    const accounts = [...this.pending];
    this.pending.clear();
    this.pendingCount = 0;
    for (const [accountId, callers] of accounts) {
      const watch = await this.watchOf(accountId, now);
      if (!watch) {
        for (const pending of callers.values()) this.enqueue(accountId, pending);
        continue;
      }
      if (watch.thresholds.length === 0) continue;
      const counters = new Map(
        this.deps.counters.list(accountId).map((counter) => [chainId(counter), counter]),
      );
      const unsent: Pending[] = [];
      for (const pending of callers.values()) {
        const statuses = capStatuses(
          pending.caller,
          watch,
          (key) => counters.get(chainId(key)),
          pending.atMs,
        );
        for (const crossing of thresholdCrossings(accountId, statuses, watch)) {
          if (this.published.has(crossing.key)) continue;
          const message: AlertMessage = {
            v: 1,
            key: crossing.key,
            alert: {
              type: "budget.threshold_crossed",
              account_id: accountId,
              occurred_at: new Date(now).toISOString(),
              counter: crossing.counter,
            },
          };
          try {
            await publishEvent(this.deps.nc, AlertSubjects.budget(accountId), message, crossing.key);
            this.published.set(crossing.key, Date.parse(crossing.counter.window_end));
          } catch (error) {
            this.deps.logger.warn(
              { err: error, account_id: accountId },
              "cannot publish a budget alert; retrying",
            );
            unsent.push(pending);
            break;
          }
        }
      }
      for (const pending of unsent) this.enqueue(accountId, pending);
    }
  }

  private enqueue(accountId: string, pending: Pending) {
    let callers = this.pending.get(accountId);
    if (!callers) {
      callers = new Map();
      this.pending.set(accountId, callers);
    }
    if (callers.has(pending.key)) return;
    callers.set(pending.key, pending);
    this.pendingCount++;
  }

  private fresh(cached: { fetchedAt: number }, now: number) {
    return now - cached.fetchedAt < this.deps.options.watchTtlMs;
  }

  /** The account's watch list, cached; undefined when the control-plane cannot say now. */
  private async watchOf(accountId: string, now: number): Promise<AlertWatch | undefined> {
    const cached = this.watches.get(accountId);
    if (cached && this.fresh(cached, now)) return cached.watch;
    try {
      const watch = await request(
        this.deps.nc,
        Notifications.watch,
        { account_id: accountId },
        { timeoutMs: 2_000 },
      );
      this.watches.set(accountId, { watch, fetchedAt: now });
      this.unreachableLogged = false;
      return watch;
    } catch (error) {
      if (!this.unreachableLogged)
        this.deps.logger.warn({ err: error }, "cannot ask which caps are watched for alerts; retrying");
      this.unreachableLogged = true;
      return undefined;
    }
  }
}
