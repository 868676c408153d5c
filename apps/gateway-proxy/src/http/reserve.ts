import { request } from "@agentnet/bus";
import {
  AppError,
  type Caller,
  Consumption,
  type Policy,
  type ReservationEstimate,
} from "@agentnet/contracts";
import type { ProxyContext } from "../context";
import { reserveBudgetRules } from "../domain/limits";
import type { Reservation } from "../events/build";
import type { AccountView } from "../snapshot/cache";

export type Reserved =
  | { kind: "allow"; reservation?: Reservation }
  | { kind: "deny"; reason: string; retryAfter: number }
  | { kind: "unavailable" };

/** Holds the request's worst case; no answer from consumption fails closed (the caller asked for limits). */
export async function reserve(
  ctx: ProxyContext,
  caller: Caller,
  view: AccountView,
  requestId: string,
  policy: Pick<Policy, "id" | "source_groups" | "limits">,
  estimate: ReservationEstimate,
): Promise<Reserved> {
  try {
    const reply = await request(
      ctx.nc,
      Consumption.reserve,
      {
        account_id: caller.account_id,
        request_id: requestId,
        user_id: caller.user_id,
        group_ids: caller.group_ids,
        policy: {
          id: policy.id,
          source_groups: policy.source_groups,
          ...(policy.limits ? { limits: policy.limits } : {}),
        },
        budget_rules: reserveBudgetRules(view.snapshot.budget_rules, caller),
        estimate,
      },
      { timeoutMs: ctx.options.reserveTimeoutMs },
    );
    if (reply.decision === "deny") {
      return { kind: "deny", reason: reply.reason, retryAfter: Math.max(1, reply.retry_after_seconds) };
    }
    if (!reply.reservation_id) return { kind: "allow" };
    return { kind: "allow", reservation: { id: reply.reservation_id, counters: reply.counters ?? [] } };
  } catch (error) {
    if (!(error instanceof AppError)) ctx.logger.error({ err: error }, "reserving failed");
    return { kind: "unavailable" };
  }
}
