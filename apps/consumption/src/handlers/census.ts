import { jsonOrUndefined, type NatsConnection } from "@agentnet/bus";
import {
  CONSUMPTION_CENSUS_SUBJECT,
  type ConsumptionCensus,
  ConsumptionCensusAnswer,
} from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { UsageKeeper } from "../keeper";
import { pause } from "./pause";

/** How long one census round waits for answers; a proxy that did not answer is asked again in the next. */
const CENSUS_WAIT_MS = 1_000;
/** The pause between rounds, and between looks at the settlement of the stream's events. */
const RETRY_MS = 500;

/**
 * A new leader's census of the lease holders its predecessor recorded (`CONSUMPTION_CENSUS_SUBJECT`),
 * asked again round after round until every one of them has answered with no request event
 * pending and no request still holding on an earlier leader's lease (events buffered through a
 * JetStream outage, and requests in flight, are usage of leases this leader cannot see). A holder
 * that answered so once is done: it admits on no earlier leader's lease from then.
 * Then, once the events the stream holds are settled, the keeper grants from then on instead of
 * at the outage horizon the predecessor recorded when it lost NATS (a NATS node's loss in a
 * cluster drops the leader's connection for a moment, and the proxies' too). Ends when the term
 * does, or when no census can shorten the wait any more.
 */
export async function takeCensus(
  deps: {
    nc: NatsConnection;
    keeper: UsageKeeper;
    logger: Logger;
    clock: () => number;
    settledThroughNow: (pollMs: number, signal: AbortSignal) => Promise<boolean>;
  },
  leaseSubject: string,
  signal: AbortSignal,
): Promise<void> {
  const census: ConsumptionCensus = { v: 1, lease_subject: leaseSubject };
  const targets = deps.keeper.censusTargets();
  if (targets === undefined) return;
  const waiting = new Set(targets);
  for (let round = 1; !signal.aborted; round++) {
    if (deps.keeper.censusTargets() === undefined) return;
    if (await everyHolderClear(deps, census, waiting)) {
      if (!(await deps.settledThroughNow(RETRY_MS, signal))) return;
      deps.keeper.censusTaken(deps.clock());
      deps.logger.info(
        {
          proxies: targets.length,
          rounds: round,
          grants_from: new Date(deps.keeper.graceUntil()).toISOString(),
        },
        "census of lease holders taken: none admits on the last leader's leases, their events are settled",
      );
      return;
    }
    await pause(RETRY_MS, signal);
  }
}

/**
 * One round: whether every proxy still `waiting` has now answered with no request event pending
 * and no request in flight on an earlier leader's lease.
 */
async function everyHolderClear(
  deps: { nc: NatsConnection; logger: Logger },
  census: ConsumptionCensus,
  waiting: Set<string>,
): Promise<boolean> {
  if (waiting.size === 0) return true;
  try {
    const answers = await deps.nc.requestMany(CONSUMPTION_CENSUS_SUBJECT, JSON.stringify(census), {
      strategy: "timer",
      maxWait: CENSUS_WAIT_MS,
    });
    for await (const message of answers) {
      const answer = ConsumptionCensusAnswer.safeParse(jsonOrUndefined(message.string()));
      if (!answer.success || answer.data.events_pending > 0 || answer.data.holds_open > 0) continue;
      waiting.delete(answer.data.proxy_id);
      if (waiting.size === 0) return true;
    }
  } catch (err) {
    // No proxy listening (no responders), or the connection dropped: the next round asks again.
    deps.logger.debug({ err }, "census round without every answer");
  }
  return false;
}
