import type { ReserveReply } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import { makeEvent, makeLimits, makeReserve } from "../test-support";
import { CounterBook, type ReserveInput } from "./counter-book";
import { applicableLimits } from "./limits";
import { estimateAmount } from "./reservation";

const NOW = Date.UTC(2031, 0, 1, 10, 30, 0);
const TTL = 60_000;
const HOUR_START = Date.UTC(2031, 0, 1, 10, 0, 0) / 1000;

let ids = 0;
const RETRY_WINDOW = 30_000;
const book = () => new CounterBook(() => `res-${++ids}`, TTL, RETRY_WINDOW);

const capped = (user_cap: number, group_cap = 0) => {
  const base = makeReserve();
  const limits = makeLimits({ token_limit: { enabled: true, user_cap, group_cap, window_seconds: 3600 } });
  return { ...base, policy: { ...base.policy, limits } };
};
const inputOf = (request: ReturnType<typeof capped>, request_id = request.request_id): ReserveInput => ({
  account_id: request.account_id,
  request_id,
  user_id: request.user_id,
  checks: applicableLimits(request),
  amount: estimateAmount(request.estimate),
});
const allowed = (reply: ReserveReply) => {
  if (reply.decision !== "allow" || !reply.reservation_id) throw new Error("expected a reservation");
  return reply;
};

describe("CounterBook.reserve", () => {
  it("holds the estimate on every counter until the cap is reached, then denies", () => {
    const counters = book();
    const request = capped(250, 1000); // estimate 100: two fit under the user cap
    const replies = [1, 2, 3].map((n) => counters.reserve(inputOf(request, `r${n}`), NOW));
    expect(replies.map((reply) => reply.decision)).toEqual(["allow", "allow", "deny"]);
    expect(allowed(replies[0] as ReserveReply).counters).toEqual([
      {
        dimension_kind: "user",
        dimension_id: request.user_id,
        window_seconds: 3600,
        window_start: HOUR_START,
      },
      {
        dimension_kind: "group",
        dimension_id: request.group_ids[0],
        window_seconds: 3600,
        window_start: HOUR_START,
      },
    ]);
    expect(replies[2]).toMatchObject({ reason: "llm_policy.token_cap_exceeded", retry_after_seconds: 1800 });
  });

  it("answers a retried request with its first reservation, and 409 once it was decided", () => {
    const counters = book();
    const request = capped(1000);
    const first = allowed(counters.reserve(inputOf(request), NOW));
    expect(counters.reserve(inputOf(request), NOW)).toEqual(first);
    counters.commit(counters.prepare([makeEvent(request, first)], NOW), NOW);
    expect(() => counters.reserve(inputOf(request), NOW)).toThrow(/already decided/);
    // Past the retry window the key is forgotten (memory stays bounded at high request rates).
    counters.forget(NOW + RETRY_WINDOW);
    expect(counters.reserve(inputOf(request), NOW + RETRY_WINDOW).decision).toBe("allow");
  });

  it("frees expired holds", () => {
    const counters = book();
    const request = capped(100);
    allowed(counters.reserve(inputOf(request, "a"), NOW));
    expect(counters.reserve(inputOf(request, "b"), NOW).decision).toBe("deny");
    expect(counters.expire(NOW + TTL - 1)).toBe(0);
    expect(counters.expire(NOW + TTL)).toBe(1);
    expect(counters.reserve(inputOf(request, "b"), NOW + TTL).decision).toBe("allow");
  });
});

describe("CounterBook settlement", () => {
  it("prepares without changing anything, and commit swaps the estimate for real usage", () => {
    const counters = book();
    const request = capped(150);
    const reservation = allowed(counters.reserve(inputOf(request, "a"), NOW));
    const settlement = counters.prepare([makeEvent(request, reservation)], NOW);
    expect(settlement.deltas).toHaveLength(2);
    expect(counters.list(request.account_id)).toEqual([]);
    expect(counters.reserve(inputOf(request, "b"), NOW).decision).toBe("deny");
    counters.commit(settlement, NOW);
    expect(counters.list(request.account_id).map((c) => [c.tokens_input, c.committed_tokens])).toEqual([
      [30, 50],
      [30, 50],
    ]);
    expect(counters.reserve(inputOf(request, "b"), NOW).decision).toBe("allow");
  });

  it("skips events seen before and repeats inside one batch", () => {
    const counters = book();
    const request = capped(1000);
    const event = makeEvent(request, allowed(counters.reserve(inputOf(request), NOW)));
    const first = counters.prepare([event, event], NOW);
    expect(first.eventIds).toEqual([event.id]);
    counters.commit(first, NOW);
    expect(counters.prepare([event], NOW)).toEqual({ eventIds: [], deltas: [], endedHolds: [] });
  });

  it("counts an event whose hold is gone on the counters the event carries", () => {
    const counters = book();
    const request = capped(1000);
    const reservation = allowed(counters.reserve(inputOf(request), NOW));
    const successor = book(); // a new leader: the hold was lost with the old one
    successor.commit(successor.prepare([makeEvent(request, reservation)], NOW), NOW);
    expect(successor.list(request.account_id).map((c) => c.tokens_output)).toEqual([20, 20]);
  });

  it("releases denied and failed requests without counting them", () => {
    const counters = book();
    const request = capped(100);
    const reservation = allowed(counters.reserve(inputOf(request, "a"), NOW));
    const failed = makeEvent(request, reservation, { status_code: 502, input_tokens: 0, output_tokens: 0 });
    counters.commit(counters.prepare([failed], NOW), NOW);
    expect(counters.list(request.account_id)).toEqual([]);
    expect(counters.reserve(inputOf(request, "b"), NOW).decision).toBe("allow");
  });
});

describe("CounterBook upkeep", () => {
  it("hands out changed counters once for a snapshot, and prunes ended windows", () => {
    const counters = book();
    const request = capped(1000);
    counters.commit(
      counters.prepare([makeEvent(request, allowed(counters.reserve(inputOf(request), NOW)))], NOW),
      NOW,
    );
    expect(counters.takeDirty()).toHaveLength(2);
    expect(counters.takeDirty()).toEqual([]);
    counters.pruneEnded(Math.floor(NOW / 1000) + 3600);
    expect(counters.list(request.account_id)).toEqual([]);
  });

  it("lists newest window first and filters by visibility", () => {
    const counters = book();
    const request = capped(1000);
    for (const at of [NOW, NOW + 3600_000]) {
      const reply = allowed(counters.reserve(inputOf(request, `r${at}`), at));
      counters.commit(counters.prepare([makeEvent(request, reply, { id: `e${at}` })], at), at);
    }
    const starts = counters.list(request.account_id).map((c) => c.window_start);
    expect(starts).toEqual([...starts].sort().reverse());
    expect(counters.list(request.account_id, (c) => c.dimension_kind === "user")).toHaveLength(2);
  });
});
