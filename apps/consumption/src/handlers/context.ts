import { type Handler, type NatsConnection, type Subscription, serve } from "@agentnet/bus";
import { type Endpoint, QUEUE } from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { BudgetAlerts } from "../alerts/budget-alerts";
import type { AdmissionWatch } from "../domain/admissions";
import type { UsageKeeper } from "../keeper";
import type { ConsumptionMetrics } from "../metrics";

/** What every handler of the leading replica needs: keeper, admissions, budget alerts, bus and logger. */
export interface HandlerContext {
  nc: NatsConnection;
  logger: Logger;
  keeper: UsageKeeper;
  admissions: AdmissionWatch;
  alerts: BudgetAlerts;
  /** Undefined with metrics off. */
  metrics?: ConsumptionMetrics | undefined;
}

/** Serves one endpoint in the consumption queue group; only the leading replica subscribes. */
export const handle = <E extends Endpoint>(
  ctx: HandlerContext,
  endpoint: E,
  handler: Handler<E>,
): Subscription =>
  serve(ctx.nc, endpoint, handler, {
    queue: QUEUE.consumption,
    onUnexpectedError: (err, subject) => ctx.logger.error({ err, subject }, "handler failed"),
  });
