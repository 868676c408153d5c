import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { publishEvent } from "@agentnet/bus";
import {
  AlertMessage,
  AlertSubjects,
  type NotificationDelivery,
  type NotificationSettingsWithSecret,
  type Provider,
} from "@agentnet/contracts";
import { eventually, uniqueId } from "@agentnet/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Account, clearOfHourEnd, configure, openaiClient, userCounter } from "../setup";
import { type Stack, startStack } from "../stack";
import { verifySignature, WebhookReceiver } from "./receiver";

/** A vendor that refuses every key, as one does after the key was revoked. */
async function startRevokedVendor(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(401, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ error: { message: "Incorrect API key provided", type: "invalid_request_error" } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let stack: Stack;
let receiver: WebhookReceiver;
let receiverUrl: string;
/** A receiver on loopback that the allow-list does not name. */
let unlisted: WebhookReceiver;
let unlistedUrl: string;
let revoked: Awaited<ReturnType<typeof startRevokedVendor>>;

beforeAll(async () => {
  revoked = await startRevokedVendor();
  receiver = new WebhookReceiver();
  receiverUrl = await receiver.start();
  unlisted = new WebhookReceiver();
  unlistedUrl = await unlisted.start();
  stack = await startStack({
    proxy: { allowedPrivateUpstreams: [new URL(revoked.url).host] },
    consumption: { leaseTtlMs: 3_000, quotaLeaseTtlMs: 3_000, ackWaitMs: 3_000 },
    // The receiver on loopback is allowed by address and port; every other loopback port is not.
    notifier: {
      allowedPrivateWebhooks: [receiver.host],
      retryDelaysMs: [300, 300, 300, 300],
      attemptTimeoutMs: 2_000,
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
  await unlisted?.stop();
  await new Promise((resolve) => revoked?.server.close(resolve));
});
// Caps count per window: no test straddles an hour's end.
beforeEach(() => clearOfHourEnd(60_000), 70_000);

const HOUR = 3600;

/** An account with a webhook at a path of its own on `base`, and the secret it was given. */
async function watchedAccount(settings: Record<string, unknown> = {}, base = receiverUrl) {
  const account = await stack.newAccount();
  const path = `/${uniqueId("hook")}`;
  const created = await account.must(
    stack.api<NotificationSettingsWithSecret>("POST", "/agent-network/notifications", account.token, {
      url: `${base}${path}`,
      ...settings,
    }),
  );
  return { account, path, secret: created.signing_secret };
}

/** A user token cap of 1,000 an hour on the account's OpenAI provider. */
async function capped(account: Account) {
  const setup = configure(stack, account);
  await setup.policy([account.openaiProvider.id]);
  return setup.budgetRule({
    token_limit: { enabled: true, group_cap: 0, user_cap: 1_000, window_seconds: HOUR },
  });
}

/** One request the vendor bills `tokens` for, settled into the caller's counter before it returns. */
async function spend(account: Account, tokens: number) {
  const before = (await userCounter(stack, account.token))?.tokens_input ?? 0;
  stack.openai.usage = { input: tokens, output: 0, cached: 0, creation: 0 };
  await openaiClient(stack, account.token).chat.completions.create({
    model: "gpt-4o",
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 5,
  });
  await eventually(async () => (await userCounter(stack, account.token))?.tokens_input === before + tokens);
}

const deliveries = async (account: Account) =>
  (await stack.api<NotificationDelivery[]>("GET", "/agent-network/notifications/deliveries", account.token))
    .body;

const settle = (ms = 2_500) => new Promise((resolve) => setTimeout(resolve, ms));

describe("budget alerts", () => {
  it("crossing 80 % then 100 % of a cap sends exactly two signed events", async () => {
    const { account, path, secret } = await watchedAccount({ thresholds: [80, 100] });
    const rule = await capped(account);

    await spend(account, 600);
    await settle(1_500);
    expect(receiver.on(path)).toEqual([]);

    await spend(account, 250);
    await eventually(() => receiver.on(path).length === 1);
    await spend(account, 150);
    await eventually(() => receiver.on(path).length === 2);
    await settle();

    const webhooks = receiver.on(path);
    expect(webhooks).toHaveLength(2);
    for (const webhook of webhooks) {
      expect(verifySignature(secret, webhook)).toBe(true);
      expect(verifySignature(secret, { ...webhook, rawBody: webhook.rawBody.replace("1000", "9000") })).toBe(
        false,
      );
      expect(webhook.headers["content-type"]).toBe("application/json");
      expect(webhook.headers["x-agentnet-event"]).toBe("budget.threshold_crossed");
    }
    const windowStart = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
    const events = receiver.events(path);
    expect(events.map((event) => event.type === "budget.threshold_crossed" && event.counter)).toEqual([
      {
        scope: "user",
        subject_id: account.owner.user_id,
        source: "budget_rule",
        source_id: rule.id,
        source_name: "cap",
        kind: "tokens",
        cap: 1_000,
        used: 850,
        threshold: 80,
        window_seconds: HOUR,
        window_start: new Date(windowStart * 1000).toISOString(),
        window_end: new Date((windowStart + HOUR) * 1000).toISOString(),
      },
      expect.objectContaining({ threshold: 100, used: 1_000 }),
    ]);
    for (const [index, event] of events.entries()) {
      expect(event).toMatchObject({ type: "budget.threshold_crossed", account_id: account.owner.account_id });
      expect(event.id).toMatch(/^evt_/);
      expect(webhooks[index]?.headers["x-agentnet-delivery"]).toBe(event.id);
      expect(Date.parse(event.occurred_at)).toBeGreaterThan(Date.now() - 60_000);
    }

    const log = await deliveries(account);
    expect(log.map((row) => [row.id, row.status, row.attempts, row.response_status, row.last_error])).toEqual(
      [
        [events[1]?.id, "delivered", 1, 200, ""],
        [events[0]?.id, "delivered", 1, 200, ""],
      ],
    );
  });

  it("sends 50 % too when it is a threshold, and every threshold one batch passed", async () => {
    const { account, path } = await watchedAccount();
    await capped(account);
    await spend(account, 900);
    await eventually(() => receiver.on(path).length === 2);
    await settle();
    const thresholds = receiver
      .events(path)
      .map((event) => (event.type === "budget.threshold_crossed" ? event.counter.threshold : 0));
    expect(thresholds.sort((a, b) => a - b)).toEqual([50, 80]);
  });

  it("watches only the caps of the budget rules named", async () => {
    const { account, path } = await watchedAccount({ thresholds: [50] });
    const rule = await capped(account);
    const other = await configure(stack, account).budgetRule({
      token_limit: { enabled: true, group_cap: 0, user_cap: 10_000, window_seconds: HOUR },
    });
    await account.must(
      stack.api("PUT", "/agent-network/notifications", account.token, {
        url: `${receiverUrl}${path}`,
        thresholds: [1, 50],
        budget_rule_ids: [other.id],
      }),
    );
    await spend(account, 600);
    await eventually(() => receiver.on(path).length === 1);
    await settle();
    expect(receiver.events(path)).toEqual([
      expect.objectContaining({ counter: expect.objectContaining({ source_id: other.id, threshold: 1 }) }),
    ]);
    expect(rule.id).not.toBe(other.id);
  });
});

describe("delivery", () => {
  it("retries a receiver that fails, and the log shows the attempts", async () => {
    const { account, path, secret } = await watchedAccount({ thresholds: [50] });
    await capped(account);
    receiver.answer(path, 500, 500);
    await spend(account, 600);
    await eventually(async () => (await deliveries(account))[0]?.status === "delivered");
    const webhooks = receiver.on(path);
    expect(webhooks).toHaveLength(3);
    const [event] = receiver.events(path);
    expect(new Set(receiver.events(path).map((each) => each.id))).toEqual(new Set([event?.id]));
    expect(webhooks.every((webhook) => verifySignature(secret, webhook))).toBe(true);
    expect(await deliveries(account)).toEqual([
      expect.objectContaining({
        id: event?.id,
        status: "delivered",
        attempts: 3,
        response_status: 200,
        last_error: "",
      }),
    ]);
  });

  it("gives up after five attempts and says why", async () => {
    const { account, path } = await watchedAccount({ thresholds: [50] });
    await capped(account);
    receiver.answer(path, 500, 500, 500, 500, 500, 500);
    await spend(account, 600);
    await eventually(async () => (await deliveries(account))[0]?.status === "failed");
    expect(receiver.on(path)).toHaveLength(5);
    expect(await deliveries(account)).toEqual([
      expect.objectContaining({
        status: "failed",
        attempts: 5,
        response_status: 500,
        last_error: "the receiver answered 500",
        next_attempt_at: null,
      }),
    ]);
  });

  it("refuses a private receiver the allow-list does not name, and the log says why", async () => {
    const { account } = await watchedAccount({ thresholds: [50] }, unlistedUrl);
    await capped(account);
    await spend(account, 600);
    await eventually(async () => (await deliveries(account))[0]?.status === "refused");
    const [row] = await deliveries(account);
    expect(row).toMatchObject({ attempts: 0, response_status: null });
    expect(row?.last_error).toContain("127.0.0.1 is the loopback address 127.0.0.1");
    expect(row?.last_error).toContain("AGN_ALLOWED_PRIVATE_WEBHOOKS");
    expect(unlisted.received).toEqual([]);
  });

  it("sends an alert once, though it is published again after a consumption restart or later", async () => {
    const { account, path } = await watchedAccount({ thresholds: [50, 80] });
    await capped(account);
    const published: AlertMessage[] = [];
    stack.nc.subscribe(AlertSubjects.budget(account.owner.account_id), {
      callback: (error, msg) => {
        if (!error) published.push(AlertMessage.parse(msg.json()));
      },
    });
    await spend(account, 600);
    await eventually(() => receiver.on(path).length === 1);
    const [first] = published;
    if (!first) throw new Error("no alert was published");

    // A new leader knows nothing of what the last one published: it publishes the 50 % again.
    await stack.crashConsumption();
    await stack.restartConsumption();
    await eventually(async () => {
      await spend(account, 10).catch(() => undefined);
      return published.filter((message) => message.key === first.key).length >= 2;
    }, 40_000);
    // As if published again after the stream's duplicate window: under another message id.
    await publishEvent(stack.nc, AlertSubjects.budget(account.owner.account_id), first, `${first.key}|later`);
    await settle();
    expect(
      receiver
        .events(path)
        .map((event) => event.type === "budget.threshold_crossed" && event.counter.threshold),
    ).toEqual([50]);
    expect(await deliveries(account)).toHaveLength(1);
  }, 90_000);
});

describe("provider alerts", () => {
  it("a vendor refusing a provider's key raises provider.credential_failed, once an hour", async () => {
    const { account, path, secret } = await watchedAccount();
    const provider = await account.must(
      stack.api<Provider>("POST", "/agent-network/providers", account.token, {
        provider_id: "openai_api",
        name: "Revoked OpenAI",
        upstream_url: `${revoked.url}/v1`,
        api_key: "sk-revoked",
      }),
    );
    await configure(stack, account).policy([provider.id]);
    const client = openaiClient(stack, account.token);
    for (let i = 0; i < 3; i++) {
      const refused = await client.chat.completions
        .create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }], max_tokens: 5 })
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 401 });
    }
    await eventually(() => receiver.on(path).length === 1);
    await settle();
    const [webhook] = receiver.on(path);
    expect(receiver.on(path)).toHaveLength(1);
    expect(webhook && verifySignature(secret, webhook)).toBe(true);
    expect(receiver.events(path)).toEqual([
      expect.objectContaining({
        type: "provider.credential_failed",
        account_id: account.owner.account_id,
        provider: {
          id: provider.id,
          name: "Revoked OpenAI",
          provider_id: "openai_api",
          upstream_status: 401,
          detected_by: "gateway_proxy",
        },
      }),
    ]);
  });

  it("are not sent to an account that chose budget alerts only", async () => {
    const { account, path } = await watchedAccount({ events: ["budget.threshold_crossed"] });
    const provider = await account.must(
      stack.api<Provider>("POST", "/agent-network/providers", account.token, {
        provider_id: "openai_api",
        name: "Revoked too",
        upstream_url: `${revoked.url}/v1`,
        api_key: "sk-revoked",
      }),
    );
    await configure(stack, account).policy([provider.id]);
    await openaiClient(stack, account.token)
      .chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 5,
      })
      .catch(() => undefined);
    await settle();
    expect(receiver.on(path)).toEqual([]);
    expect(await deliveries(account)).toEqual([]);
  });
});
