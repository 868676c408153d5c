/**
 * Whether what a run was served is what agentnet counted: each request served has one event in the
 * request stream, and a capped account's counters hold exactly the tokens served.
 */
import { request } from "@agentnet/bus";
import { Consumption, Events, REQUESTS_STREAM } from "@agentnet/contracts";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { MOCK_UPSTREAM_USAGE } from "./mock-upstream";
import type { BenchAccount } from "./proxy-stack";

/** The account's events in the request stream (one subject per account). */
async function eventsInStream(nc: NatsConnection, accountId: string): Promise<number> {
  const subject = Events.requests(accountId);
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(REQUESTS_STREAM, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

/** What an account was served: its 2xx answers, counted by the load generator. */
export interface Served {
  account: BenchAccount;
  capped: boolean;
  served: number;
}

export interface Exactness {
  served: number;
  events: number;
  /** Per counted dimension (`user:<id>`), its tokens summed over windows; none for a plain account. */
  counters: { dimension: string; input: number; output: number }[];
  exact: boolean;
}

/** What the account was served against its events and (capped) its counters, as consumption lists them. */
async function exactness(nc: NatsConnection, target: Served): Promise<Exactness> {
  const events = await eventsInStream(nc, target.account.caller.account_id);
  const byDimension = new Map<string, { dimension: string; input: number; output: number }>();
  if (target.capped) {
    const counters = await request(nc, Consumption.list, { caller: target.account.caller });
    for (const counter of counters) {
      const dimension = `${counter.dimension_kind}:${counter.dimension_id}`;
      const sum = byDimension.get(dimension) ?? { dimension, input: 0, output: 0 };
      sum.input += counter.tokens_input;
      sum.output += counter.tokens_output;
      byDimension.set(dimension, sum);
    }
  }
  const counters = [...byDimension.values()];
  const expectedInput = target.served * MOCK_UPSTREAM_USAGE.prompt_tokens;
  const expectedOutput = target.served * MOCK_UPSTREAM_USAGE.completion_tokens;
  const countersExact =
    !target.capped ||
    (counters.length > 0 &&
      counters.every((counter) => counter.input === expectedInput && counter.output === expectedOutput));
  return { served: target.served, events, counters, exact: events === target.served && countersExact };
}

/**
 * `target`'s exactness over `nc` (an operator's connection to its bus), once its last events are
 * published and settled: waits up to a minute for them.
 */
export async function settledExactness(nc: NatsConnection, target: Served): Promise<Exactness> {
  const until = Date.now() + 60_000;
  for (;;) {
    const checked = await exactness(nc, target);
    if (checked.exact || Date.now() > until) return checked;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
