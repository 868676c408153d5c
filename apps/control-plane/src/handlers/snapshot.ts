import { jsonOrUndefined, pageBookOn } from "@agentnet/bus";
import { AppError, ConfigChangedEvent, Events, type GatewaySnapshot } from "@agentnet/contracts";
import { configSizeAfter } from "../domain/config-size";
import {
  toBudgetRule,
  toGatewayMcpServer,
  toGatewayProvider,
  toGuardrail,
  toPolicy,
  toSettings,
} from "../store/agent-views";
import type { HandlerContext } from "./context";

/**
 * How long a rendered snapshot answers first pages without a new rendering. Writes through any
 * replica drop it at once (`agn.config.changed.<account>`); this only bounds how long a missed
 * event goes unnoticed.
 */
const SNAPSHOT_FRESH_MS = 10_000;

/** A snapshot that could not be rendered (MongoDB away) is answered as it failed for this long. */
const SNAPSHOT_FAILURE_MS = 5_000;

/** The account snapshots this replica rendered, answered page by page. */
export const createSnapshotBook = (ctx: Pick<HandlerContext, "nc">) =>
  pageBookOn(ctx.nc, { freshMs: SNAPSHOT_FRESH_MS, failureMs: SNAPSHOT_FAILURE_MS });

/** The account's settings and configuration as the gateway proxies and consumption read them. */
export async function loadAccountConfig(ctx: Pick<HandlerContext, "models">, accountId: string) {
  const { models } = ctx;
  const byAccount = { account_id: accountId };
  // _id breaks ties: every replica must list equal data in the same order (see `PagedEndpoint`).
  const order = { created_at: 1, _id: 1 } as const;
  const [settings, providers, policies, guardrails, budgetRules, mcpServers] = await Promise.all([
    models.Settings.findOne(byAccount).lean(),
    models.Provider.find(byAccount).sort(order).lean(),
    models.Policy.find(byAccount).sort(order).lean(),
    models.Guardrail.find(byAccount).sort(order).lean(),
    models.BudgetRule.find(byAccount).sort(order).lean(),
    models.McpServer.find(byAccount).sort(order).lean(),
  ]);
  const changed = [settings, ...providers, ...policies, ...guardrails, ...budgetRules, ...mcpServers].map(
    (doc) => (doc ? doc.updated_at.getTime() : 0),
  );
  return {
    settings: settings ? toSettings(settings) : null,
    providers: providers.map(toGatewayProvider),
    policies: policies.map(toPolicy),
    guardrails: guardrails.map(toGuardrail),
    budget_rules: budgetRules.map(toBudgetRule),
    mcp_servers: mcpServers.map(toGatewayMcpServer),
    generated_at: new Date(Math.max(0, ...changed)).toISOString(),
  };
}

/**
 * The snapshot's JSON. A failure is logged once per rendering, here; the book answers it again for a
 * few seconds. A MongoDB failure goes on as it is (`handle` answers it 503 `store.unavailable`);
 * anything else (a stored document the views cannot read) is 500 `account.config_unreadable`.
 */
export async function renderSnapshot(ctx: HandlerContext, accountId: string): Promise<string> {
  const started = performance.now();
  try {
    const snapshot: GatewaySnapshot = { account_id: accountId, ...(await loadAccountConfig(ctx, accountId)) };
    const text = JSON.stringify(snapshot);
    ctx.logger.debug(
      { account_id: accountId, bytes: text.length, ms: Math.round(performance.now() - started) },
      "account snapshot rendered",
    );
    return text;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    ctx.logger.warn({ account_id: accountId, reason }, "rendering the account snapshot failed");
    if (error instanceof AppError || (error instanceof Error && error.name.startsWith("Mongo"))) throw error;
    throw new AppError(
      500,
      "account.config_unreadable",
      `the account's configuration cannot be read: ${reason}`,
    );
  }
}

/** The account's rendered snapshot (from the book while fresh): its size is what writes are held to. */
const currentSnapshot = (ctx: HandlerContext, accountId: string) =>
  ctx.snapshots.current(accountId, () => renderSnapshot(ctx, accountId));

/**
 * Refuses a write that would take the account's snapshot past MAX_ACCOUNT_CONFIG_BYTES (422
 * `account.config_too_large`). `before` and `after` are the stored document and what the write
 * makes of it (undefined for a create, or a delete).
 */
export async function assertConfigFits(
  ctx: HandlerContext,
  accountId: string,
  change: { before?: object | undefined; after?: object | undefined },
): Promise<void> {
  const { bytes } = await currentSnapshot(ctx, accountId);
  configSizeAfter(bytes, change.before, change.after);
}

/**
 * Keeps the book current: a change announced by any replica drops the account's rendering, a
 * reconnect (events may have been missed meanwhile) drops them all.
 */
export function watchConfigChanges(ctx: HandlerContext): void {
  ctx.nc.subscribe(Events.configChangedAll, {
    callback: (error, msg) => {
      if (error) return;
      const parsed = ConfigChangedEvent.safeParse(jsonOrUndefined(msg.string()));
      if (parsed.success) ctx.snapshots.invalidate(parsed.data.account_id);
    },
  });
  void (async () => {
    for await (const status of ctx.nc.status()) {
      if (status.type === "reconnect") ctx.snapshots.invalidateAll();
    }
  })();
}
