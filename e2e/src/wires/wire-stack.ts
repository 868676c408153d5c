import type { AccessLogEntry, AccessLogPage, Provider } from "@agentnet/contracts";
import { STREAM_OUTPUT_STEP_TOKENS } from "@agentnet/gateway-proxy/estimate";
import type { GoogleTokenServer } from "@agentnet/testkit";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { type Account, clearOfHourEnd, configure, readUntil } from "../setup";
import { type Stack, startStack } from "../stack";
import type { SeenRequest } from "../upstream";

/** What every wire's stack offers the test file that starts it. */
export interface WireStack {
  /** The vendor's fixed usage and reply again, as each test starts. */
  reset: () => void;
  stop: () => Promise<void>;
}

/**
 * Starts a wire's stack once for the test file (handing it to `started`) and stops it after; before
 * each test, waits clear of an hour's end (the token cap's window is a day: no test straddles its
 * end, and an hour's end is the safe bound) and resets the vendor's fixed answer.
 */
export function useWireStack<T extends WireStack>(start: () => Promise<T>, started: (stack: T) => void) {
  let wire: T | undefined;
  beforeAll(async () => {
    wire = await start();
    started(wire);
  }, 60_000);
  afterAll(() => wire?.stop());
  beforeEach(() => clearOfHourEnd(), 30_000);
  beforeEach(() => wire?.reset());
}

/**
 * The stack with telemetry behind a fake vendor at `vendorUrl`, allowed as an upstream, and with
 * `tokens` Google's token endpoint too: allowed as an upstream, and the verifier's, which checks a
 * service-account key by minting a token with it, then listing models.
 */
export function startVendorStack(vendorUrl: string, tokens?: GoogleTokenServer): Promise<Stack> {
  const tokenOrigin = tokens ? new URL(tokens.tokenUri) : undefined;
  return startStack({
    telemetry: true,
    proxy: {
      allowedPrivateUpstreams: [new URL(vendorUrl).host, ...(tokenOrigin ? [tokenOrigin.host] : [])],
    },
    ...(tokenOrigin ? { verifier: { tokenEndpoints: [tokenOrigin.origin] } } : {}),
  });
}

/**
 * A fresh account whose one policy grants one provider (`provider`, the body that creates it),
 * under a daily token cap per user (generous unless said). With `capture`, prompts and answers
 * are collected, PII redacted.
 */
export async function accountWithProvider(
  stack: Stack,
  provider: Record<string, unknown>,
  options: { userCap?: number | undefined; capture?: boolean | undefined } = {},
) {
  const account = await stack.newAccount(options.capture ? { enable_prompt_collection: true } : {});
  const created = await account.must(
    stack.api<Provider>("POST", "/agent-network/providers", account.token, provider),
  );
  const setup = configure(stack, account);
  const capture = options.capture
    ? await setup.guardrail({ prompt_capture: { enabled: true, redact_pii: true } })
    : undefined;
  await setup.policy([created.id], capture ? { guardrail_ids: [capture.id] } : {});
  await setup.budgetRule({
    token_limit: {
      enabled: true,
      group_cap: 0,
      user_cap: options.userCap ?? 100_000_000,
      window_seconds: 86_400,
    },
  });
  return { account, provider: created };
}

/** The account's access-log rows, oldest first, once `count` are stored, and a moment more for any extra row. */
export async function storedRows(stack: Stack, account: Account, count: number): Promise<AccessLogEntry[]> {
  const read = () =>
    account.must(
      stack.api<AccessLogPage>(
        "GET",
        "/agent-network/access-logs?sort_order=ascending&page_size=100",
        account.token,
      ),
    );
  await readUntil(read, (page) => page.total_records >= count);
  await new Promise((resolve) => setTimeout(resolve, 500));
  return (await read()).data;
}

/**
 * The row of a request allowed and answered by `provider` with `model`: the vendor's counts
 * (`counts`, the row's token fields) and the cost worked out by hand.
 */
export function expectAllowedRow(
  row: AccessLogEntry | undefined,
  expected: {
    provider: Provider;
    model: string;
    stream: boolean;
    counts: Partial<AccessLogEntry>;
    cost: number;
  },
) {
  expect(row).toMatchObject({
    decision: "allow",
    status_code: 200,
    resolved_provider_id: expected.provider.id,
    model: expected.model,
    stream: expected.stream,
    ...expected.counts,
  });
  expect(row?.cost_usd).toBeCloseTo(expected.cost, 9);
}

/** The row of a stream cut at a token cap: allowed and answered, the cap named, charged within one step of it. */
export function expectCutRow(row: AccessLogEntry | undefined, cap: number) {
  expect(row).toMatchObject({
    decision: "allow",
    status_code: 200,
    deny_reason: "budget_rule.token_cap_exceeded",
    stream: true,
  });
  const charged = (row?.input_tokens ?? 0) + (row?.output_tokens ?? 0);
  expect(charged).toBeGreaterThan(0);
  expect(charged).toBeLessThanOrEqual(cap + STREAM_OUTPUT_STEP_TOKENS);
}

/**
 * The vendor saw requests, each passing `credential` (the provider's own), and none carrying any
 * of `secrets` (the agentnet token, a key the proxy should have kept) in its headers, query or body.
 */
export function expectVendorCredential(
  seen: SeenRequest[],
  credential: (request: SeenRequest) => void,
  ...secrets: string[]
) {
  expect(seen.length).toBeGreaterThan(0);
  for (const request of seen) {
    credential(request);
    const sent = JSON.stringify([request.headers, request.query, request.body]);
    for (const secret of secrets) expect(sent).not.toContain(secret);
  }
}

/** A reply of `count` distinct words (`word0 word1 …`): no word repeats, so nothing reads as a loop. */
export const distinctWords = (count: number, word = "word") =>
  Array.from({ length: count }, (_, i) => `${word}${i}`).join(" ");
