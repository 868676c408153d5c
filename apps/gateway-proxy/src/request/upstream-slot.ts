import type { HttpAnswer } from "@agentnet/service-kit";
import type { ProxyContext } from "../context";
import type { Upstream } from "../upstream/pools";
import type { Wire } from "../wires";
import type { Failed } from "./stages";

/** At most one line per origin this often while requests find its bound reached. */
const BOUND_LOG_INTERVAL_MS = 10_000;

/** The deny_reason and answer code of a request that got no slot at its upstream origin in time. */
export const UPSTREAM_BUSY = "gateway.upstream_busy";

/**
 * A slot for one attempt at `upstream` (src/upstream/origin-slots.ts): at once while the origin is
 * below its bound, else once one frees within `waitMs`. "busy" when none came in time, "left" when
 * the client went away meanwhile (it holds no slot then). A request that found the bound reached is
 * counted (its wait, and whether it got none) and logged, a line per origin every 10 s at most.
 */
export async function takeUpstreamSlot(
  ctx: ProxyContext,
  upstream: Upstream,
  res: HttpAnswer,
  waitMs: number,
): Promise<"taken" | "busy" | "left"> {
  if (upstream.slots.tryTake()) return "taken";
  const startedAt = performance.now();
  let got = false;
  if (waitMs > 0 && !res.destroyed) {
    const left = new AbortController();
    const leave = () => left.abort();
    res.once("close", leave);
    try {
      got = await upstream.slots.wait(waitMs, left.signal);
    } finally {
      res.off("close", leave);
    }
  }
  const series = ctx.metrics?.upstream.origin(upstream.host);
  series?.waitSeconds.observe((performance.now() - startedAt) / 1000);
  if (res.destroyed) {
    if (got) upstream.slots.release();
    return "left";
  }
  if (!got && series) series.refused.value++;
  noteBound(ctx, upstream, got, waitMs);
  return got ? "taken" : "busy";
}

/**
 * No slot at the origin in time: the vendor's own "overloaded" answer (503, Anthropic's 529) and
 * when to come back. Not the vendor's failure, so it cools no provider down; another candidate
 * may serve the request (`elsewhere`).
 */
export function upstreamBusy(wire: Wire, retryAfterMs: number): Failed {
  return {
    outcome: "failed",
    status: wire.overloadedStatus,
    reason: UPSTREAM_BUSY,
    message: "this gateway has as many requests in flight to the provider's upstream as it allows; try again",
    denyReason: UPSTREAM_BUSY,
    headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    elsewhere: true,
  };
}

/** Tallies what happened at the bound, and logs the tally once the last line is old enough. */
function noteBound(ctx: ProxyContext, upstream: Upstream, got: boolean, waitMs: number): void {
  const { bound, slots } = upstream;
  if (got) bound.waited++;
  else bound.refused++;
  const now = Date.now();
  if (now - bound.loggedAt < BOUND_LOG_INTERVAL_MS) return;
  ctx.logger.warn(
    {
      origin: upstream.host,
      limit: slots.limit,
      in_flight: slots.inFlight,
      waiting: slots.waiting,
      waited: bound.waited,
      refused: bound.refused,
      wait_ms: waitMs,
    },
    "requests found an upstream origin at its bound (AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN): how many got a slot after waiting, and how many none, since the last line",
  );
  bound.loggedAt = now;
  bound.waited = 0;
  bound.refused = 0;
}
