import type { AccessLogEntry, AccessLogPage, ConsumptionCounter, UsageBucket } from "@agentnet/contracts";
import { type Sent, sleep } from "./spread-client";

/** The Retry-After of a refusal whose room other leases or requests in flight hold (the proxy's `HELD_RETRY_AFTER_SECONDS`). */
const HELD_RETRY_AFTER_SECONDS = 2;

/**
 * The API as a client behind a load balancer reaches it: the api-gateways in turn, the next one
 * when one gives no answer, for up to `deadlineMs` (a killed replica, a NATS node failing over).
 */
export function apiClient(apiUrls: () => string[], deadlineMs = 60_000) {
  let next = 0;
  return async <T>(token: string, method: string, path: string, body?: unknown): Promise<T> => {
    let last = "";
    for (const deadline = Date.now() + deadlineMs; Date.now() < deadline; ) {
      const urls = apiUrls();
      const url = urls[next++ % urls.length];
      try {
        const response = await fetch(`${url}/api${path}`, {
          method,
          headers: { authorization: `Token ${token}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await response.text();
        if (response.ok) return (text ? JSON.parse(text) : undefined) as T;
        last = `${response.status} ${text.slice(0, 200)}`;
        // A 4xx is the answer; a 5xx may be a replica or a node going away.
        if (response.status < 500) break;
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
      await sleep(250);
    }
    throw new Error(`${method} ${path}: ${last}`);
  };
}
export type ApiCall = ReturnType<typeof apiClient>;

export interface CapLimits {
  tokens?: number;
  usd?: number;
}

/** A fresh account's setup: settings, one OpenAI provider at the fake vendor, a policy, caps. */
export async function configureAccount(
  api: ApiCall,
  token: string,
  upstreamUrl: string,
  caps: CapLimits,
  windowSeconds = 86_400,
) {
  await api(token, "POST", "/agent-network/settings", {
    proxy_address: "gw.example.com",
    enable_log_collection: true,
  });
  const provider = await api<{ id: string }>(token, "POST", "/agent-network/providers", {
    provider_id: "openai_api",
    name: "OpenAI",
    upstream_url: `${upstreamUrl}/v1`,
    api_key: "sk-upstream",
  });
  const groups = await api<{ id: string; name: string }[]>(token, "GET", "/groups");
  const all = groups.find((group) => group.name === "All") ?? groups[0];
  await api(token, "POST", "/agent-network/policies", {
    name: "everyone",
    source_groups: [all?.id],
    destination_provider_ids: [provider.id],
  });
  await api(token, "POST", "/agent-network/budget-rules", {
    name: "cap",
    limits: {
      token_limit: {
        enabled: caps.tokens !== undefined,
        group_cap: 0,
        user_cap: caps.tokens ?? 0,
        window_seconds: windowSeconds,
      },
      budget_limit: {
        enabled: caps.usd !== undefined,
        group_cap_usd: 0,
        user_cap_usd: caps.usd ?? 0,
        window_seconds: windowSeconds,
      },
    },
  });
}

const tokensOf = (rows: { input_tokens: number; output_tokens: number }[]) =>
  rows.reduce((total, row) => total + row.input_tokens + row.output_tokens, 0);
const counterTokens = (counters: ConsumptionCounter[]) =>
  counters.reduce((total, counter) => total + counter.tokens_input + counter.tokens_output, 0);
const nanos = (usd: number) => Math.round(usd * 1e9);

/**
 * Every row of the account once telemetry has them all (at least `expected`, and no more coming
 * for two seconds), oldest first so that pages stay put. Bounded: 90 s (events a killed consumer
 * had pulled come again after its ack wait, 30 s).
 */
async function rowsOf(api: ApiCall, token: string, expected: number): Promise<AccessLogEntry[]> {
  let total = -1;
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
    const now = (await api<AccessLogPage>(token, "GET", "/agent-network/access-logs?page_size=1"))
      .total_records;
    if (now >= expected && now === total) break;
    total = now;
    await sleep(2_000);
  }
  const rows: AccessLogEntry[] = [];
  for (let page = 1; page < 1_000; page++) {
    const result = await api<AccessLogPage>(
      token,
      "GET",
      `/agent-network/access-logs?sort_order=ascending&page=${page}&page_size=100`,
    );
    rows.push(...result.data);
    if (rows.length >= result.total_records || result.data.length === 0) break;
  }
  return rows;
}

async function settle<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(500);
  }
}

/**
 * What the account's books say once everything arrived, against what its clients were served:
 * rows (telemetry), usage (telemetry's rollups), counters (consumption), in tokens and nano-USD.
 */
export async function books(api: ApiCall, token: string, sent: Sent[]) {
  const rows = await rowsOf(api, token, sent.filter((entry) => entry.status !== 0).length);
  const charged = rows.filter((row) => row.decision === "allow");
  const chargedNanos = charged.reduce((total, row) => total + nanos(row.cost_usd), 0);
  const usage = await settle(
    () => api<UsageBucket[]>(token, "GET", "/agent-network/usage/overview?granularity=day"),
    (buckets) => tokensOf(buckets) >= tokensOf(charged),
    20_000,
  );
  const counters = await settle(
    async () =>
      (await api<ConsumptionCounter[]>(token, "GET", "/agent-network/consumption")).filter(
        (counter) => counter.dimension_kind === "user",
      ),
    (list) => counterTokens(list) >= tokensOf(charged),
    20_000,
  );
  const served = sent.filter((entry) => entry.status === 200).length;
  // A client that gave up (5 s) on an answer the proxy then gave in full sees no 200 for a 200 row.
  const gaveUp = sent.filter((entry) => entry.reason === "TimeoutError").length;
  const rows200 = rows.filter((row) => row.status_code === 200).length;
  const lost = rows.filter((row) => row.deny_reason === "gateway.proxy_lost").length;
  const statuses = new Map<number, number>();
  for (const row of rows) statuses.set(row.status_code, (statuses.get(row.status_code) ?? 0) + 1);
  const result = {
    served,
    gaveUp,
    rows200,
    lost,
    rowStatuses: [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${count} × ${status}`)
      .join(", "),
    tokens: { rows: tokensOf(charged), usage: tokensOf(usage), counters: counterTokens(counters) },
    nanos: {
      rows: chargedNanos,
      usage: usage.reduce((total, bucket) => total + nanos(bucket.cost_usd), 0),
      counters: counters.reduce((total, counter) => total + nanos(counter.cost_usd), 0),
    },
    windows: counters.length,
  };
  return {
    ...result,
    /** rows = usage = counters = what clients were served. */
    exact:
      rows200 >= served &&
      rows200 <= served + gaveUp &&
      result.tokens.usage === result.tokens.rows &&
      result.tokens.counters === result.tokens.rows &&
      Math.abs(result.nanos.usage - result.nanos.rows) <= charged.length &&
      Math.abs(result.nanos.counters - result.nanos.rows) <= charged.length,
    summary: `${served} answered 200; rows ${[...statuses].length ? result.rowStatuses : "none"}${lost ? ` (${lost} gateway.proxy_lost, charged as admitted)` : ""}; tokens rows ${result.tokens.rows}, usage ${result.tokens.usage}, counters ${result.tokens.counters} over ${counters.length} window(s)`,
  };
}
export type Books = Awaited<ReturnType<typeof books>>;

/**
 * A cap measured from outside. `perRequest` is what every request holds and uses (the fake vendor
 * reports exactly the proxy's estimate, so a hold and its settlement are equal), in the cap's unit.
 * - overshoot: what was charged beyond the cap.
 * - refusals with room: cap refusals (429) at whose answer the cap still had room for the request:
 *   cap − perRequest × (requests that may have been charged and had been sent by then: served, or
 *   not answered to the client) ≥ perRequest. Counting every such request sent before the
 *   refusal's answer as already admitted takes the proxy's view at its latest and tightest, so a
 *   refusal counted here had room by any reading. Split by what the
 *   refusal said: "full" (Retry-After the window's end: settled usage leaves no room), which with
 *   room would be a lie, and "held" (Retry-After 2 s: the room is held by requests in flight or by
 *   other proxies' leases).
 */
export function capFigures(
  sent: Sent[],
  charged: number,
  cap: number,
  perRequest: number,
  lostCharges: number,
) {
  const servedAt = sent
    .filter((entry) => entry.status === 200 || entry.status === 0)
    .map((entry) => entry.at)
    .sort((a, b) => a - b);
  const refusals = sent.filter((entry) => entry.status === 429);
  let fullWithRoom = 0;
  let heldWithRoom = 0;
  let mostRoom = 0;
  let mostRoomRefusal: Sent | undefined;
  for (const refusal of refusals) {
    const admittedBefore = lowerBound(servedAt, refusal.done) + lostCharges;
    const room = Math.floor((cap - perRequest * admittedBefore) / perRequest);
    if (room < 1) continue;
    if ((refusal.retryAfter ?? 0) > HELD_RETRY_AFTER_SECONDS) fullWithRoom++;
    else heldWithRoom++;
    if (room > mostRoom) {
      mostRoom = room;
      mostRoomRefusal = refusal;
    }
  }
  return {
    cap,
    charged,
    overshoot: Math.max(0, charged - cap),
    refusals: refusals.length,
    fullWithRoom,
    heldWithRoom,
    /** The most room (in requests) any refusal left unused. */
    mostRoom,
    /** That refusal: when it was answered, and by which proxies. */
    mostRoomRefusal,
  };
}

/** How many of the sorted `values` are below `limit`. */
function lowerBound(values: number[], limit: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((values[mid] as number) < limit) low = mid + 1;
    else high = mid;
  }
  return low;
}
