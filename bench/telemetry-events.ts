/**
 * Realistic gateway request events for the telemetry benchmarks: 50 users over 30 days, sessions
 * of about 20 requests (a quarter of requests have no session), 10 % unlogged, 1 % denied, 5 %
 * with a captured prompt. Built one at a time so a million of them never sit in memory.
 */
import type { NatsConnection } from "@agentnet/bus";
import { Events, type GatewayRequestEvent } from "@agentnet/contracts";
import { jetstream } from "@nats-io/jetstream";
import { percentile } from "./percentile";

export const DAY = 86_400_000;
const MODELS = ["gpt-4o", "gpt-4o-mini", "claude-sonnet-4", "claude-haiku", "mistral-large"];
const USERS = 50;
const SESSION_REQUESTS = 20;

/** Event `i` of `count`, spread evenly over the 30 days before `now` (i = 0 is the newest). */
export function makeEvent(accountId: string, i: number, count: number, now: number): GatewayRequestEvent {
  const user = i % USERS;
  const model = MODELS[(i >> 3) % MODELS.length] ?? "gpt-4o";
  const input = 200 + (i % 900);
  const output = 50 + (i % 300);
  const denied = i % 97 === 0;
  const logged = i % 10 !== 0;
  return {
    v: 1,
    id: `${accountId}-${i}`,
    account_id: accountId,
    service_id: "svc_agent_network",
    timestamp: new Date(now - Math.floor((i / count) * 30 * DAY)).toISOString(),
    status_code: denied ? 429 : 200,
    duration_ms: 300 + (i % 2000),
    user_id: `user_${user}`,
    user_email: `user${user}@corp.example`,
    user_name: `User ${user}`,
    source_ip: logged ? `10.0.${user}.7` : "",
    method: "POST",
    host: logged ? "api.openai.com" : "",
    path: logged ? "/v1/chat/completions" : "",
    provider: model.startsWith("claude") ? "anthropic" : "openai",
    model,
    session_id: i % 4 === 0 ? "" : `sess_${user}_${Math.floor(i / (USERS * SESSION_REQUESTS))}`,
    resolved_provider_id: `prov_${i % 3}`,
    selected_policy_id: "pol_default",
    decision: denied ? "deny" : "allow",
    deny_reason: denied ? "llm_policy.token_cap_exceeded" : "",
    input_tokens: denied ? 0 : input,
    output_tokens: denied ? 0 : output,
    total_tokens: denied ? 0 : input + output,
    cached_input_tokens: 0,
    cache_creation_tokens: 0,
    cost_usd: denied ? 0 : (input * 2500 + output * 10000) / 1e9,
    input_cost_usd: denied ? 0 : (input * 2500) / 1e9,
    cached_input_cost_usd: 0,
    cache_creation_cost_usd: 0,
    output_cost_usd: denied ? 0 : (output * 10000) / 1e9,
    cache_cost_usd: 0,
    stream: i % 2 === 0,
    group_ids: [`grp_${user % 5}`, "grp_all"],
    ...(i % 20 === 0 ? { request_prompt: "Refactor this function to ".repeat(8) } : {}),
    logged,
  };
}

/** Median and 95th percentile of some timings. */
export function percentiles(times: number[]): { p50: number; p95: number } {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
}

/**
 * Publishes events 0..count-1 with acks, `window` in flight; returns ms taken. `onAcked` hears
 * how many are acked after each window.
 */
export async function publishEvents(
  nc: NatsConnection,
  accountId: string,
  count: number,
  window: number,
  onAcked: (acked: number) => void = () => {},
) {
  const js = jetstream(nc);
  const now = Date.now();
  const started = performance.now();
  for (let i = 0; i < count; i += window) {
    const acks = [];
    for (let j = i; j < Math.min(count, i + window); j++) {
      const event = makeEvent(accountId, j, count, now);
      acks.push(js.publish(Events.requests(accountId), JSON.stringify(event), { msgID: event.id }));
    }
    await Promise.all(acks);
    onAcked(Math.min(count, i + window));
  }
  return performance.now() - started;
}
