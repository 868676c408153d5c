import { jsonOrUndefined, type NatsConnection } from "@agentnet/bus";
import {
  CONSUMPTION_CENSUS_SUBJECT,
  type ConsumptionCensus,
  ConsumptionCensusAnswer,
} from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { UsageKeeper } from "../keeper";

/** How long one census waits for answers; a proxy still reconnecting is asked again in the next. */
const CENSUS_WAIT_MS = 1_000;

/**
 * A new leader's census of the lease holders its predecessor recorded (`CONSUMPTION_CENSUS_SUBJECT`):
 * asked again until every one of them has answered, then the keeper grants once their leases end
 * on their TTL instead of at the outage horizon the predecessor recorded when it lost NATS (a NATS
 * node's loss in a cluster drops the leader's connection for a moment, and the proxies' too).
 * Ends when the term does, or when no census can shorten the wait any more.
 */
export async function takeCensus(
  deps: { nc: NatsConnection; keeper: UsageKeeper; logger: Logger; clock: () => number },
  leaseSubject: string,
  signal: AbortSignal,
): Promise<void> {
  const census: ConsumptionCensus = { v: 1, lease_subject: leaseSubject };
  for (let round = 1; !signal.aborted; round++) {
    const targets = deps.keeper.censusTargets();
    if (targets === undefined) return;
    const waiting = new Set(targets);
    let leasesEndBy = deps.clock();
    if (waiting.size > 0) {
      try {
        const answers = await deps.nc.requestMany(CONSUMPTION_CENSUS_SUBJECT, JSON.stringify(census), {
          strategy: "timer",
          maxWait: CENSUS_WAIT_MS,
        });
        for await (const message of answers) {
          const answer = ConsumptionCensusAnswer.safeParse(jsonOrUndefined(message.string()));
          if (!answer.success) continue;
          waiting.delete(answer.data.proxy_id);
          // Measured from now, after the proxy measured it: never earlier than its leases end.
          leasesEndBy = Math.max(leasesEndBy, deps.clock() + answer.data.leases_end_in_ms);
          if (waiting.size === 0) break;
        }
      } catch (err) {
        // No proxy listening (no responders), or the connection dropped: the next round asks again.
        deps.logger.debug({ err }, "census round without every answer");
      }
    }
    if (signal.aborted) return;
    if (waiting.size === 0) {
      deps.keeper.censusTaken(leasesEndBy);
      deps.logger.info(
        {
          proxies: targets.length,
          rounds: round,
          grants_from: new Date(deps.keeper.graceUntil()).toISOString(),
        },
        "census of lease holders taken: no proxy rides an outage on the last leader's leases",
      );
      return;
    }
    await new Promise((wake) => setTimeout(wake, CENSUS_WAIT_MS));
  }
}
