import type { ConsumptionCounter } from "@agentnet/contracts";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { Stack } from "./stack";

export type Account = Awaited<ReturnType<Stack["newAccount"]>>;

/** Configuration through the public API, as an operator would do it. */
export function configure(stack: Stack, account: Account) {
  const allGroup = account.owner.group_ids[0] ?? "";
  return {
    allGroup,
    policy: (providerIds: string[], extra: Record<string, unknown> = {}) =>
      account.must(
        stack.api<{ id: string }>("POST", "/agent-network/policies", account.token, {
          name: "everyone",
          source_groups: [allGroup],
          destination_provider_ids: providerIds,
          ...extra,
        }),
      ),
    guardrail: (checks: Record<string, unknown>) =>
      account.must(
        stack.api<{ id: string }>("POST", "/agent-network/guardrails", account.token, {
          name: "g",
          checks: {
            model_allowlist: { enabled: false, models: [] },
            prompt_capture: { enabled: false, redact_pii: false },
            ...checks,
          },
        }),
      ),
    budgetRule: (limits: Record<string, unknown>) =>
      account.must(
        stack.api<{ id: string }>("POST", "/agent-network/budget-rules", account.token, {
          name: "cap",
          limits: {
            token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600 },
            budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
            ...limits,
          },
        }),
      ),
  };
}

export const openaiClient = (stack: Stack, token: string) =>
  new OpenAI({ apiKey: token, baseURL: `${stack.proxy.url}/v1`, maxRetries: 0 });

export const anthropicClient = (stack: Stack, token: string) =>
  new Anthropic({ apiKey: token, baseURL: stack.proxy.url, maxRetries: 0 });

/**
 * Polls a read until `done` accepts it, and returns the last value either way (the test's
 * assertions then say what was wrong): events reach telemetry and consumption asynchronously.
 */
export async function readUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The caller's own user counter as `GET /agent-network/consumption` lists it, once one was counted. */
export const userCounter = async (stack: Stack, token: string) =>
  (await stack.api<ConsumptionCounter[]>("GET", "/agent-network/consumption", token)).body.find(
    (counter) => counter.dimension_kind === "user",
  );

/**
 * Waits for the next hour to begin when it is less than `marginMs` away. Cap windows of an hour
 * or a day end on the hour; a test that reads one window's counter, or a Retry-After set by the
 * window's end, must not straddle one (a run at 01:59:59 got Retry-After 1).
 */
export async function clearOfHourEnd(marginMs = 20_000): Promise<void> {
  const untilHourEnd = 3_600_000 - (Date.now() % 3_600_000);
  if (untilHourEnd < marginMs) await new Promise((resolve) => setTimeout(resolve, untilHourEnd + 50));
}
