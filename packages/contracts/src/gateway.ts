import { z } from "zod";
import { BudgetRule } from "./budget-rules";
import { Id, SealedSecret, Timestamp } from "./common";
import { Guardrail } from "./guardrails";
import { GatewayMcpServer } from "./mcp-servers";
import { Policy } from "./policies";
import { Provider } from "./providers";
import { Settings } from "./settings";

/**
 * What a gateway proxy needs to decide an account's requests. Credentials travel sealed: only
 * processes holding AGN_SEALING_KEY (the proxy) open them, never the bus.
 */
export const GatewayProvider = Provider.extend({ sealed_api_key: SealedSecret });
export type GatewayProvider = z.infer<typeof GatewayProvider>;

export const GatewaySnapshot = z.object({
  account_id: Id,
  /** null when the account has no agent-network settings: the proxy refuses its traffic. */
  settings: Settings.nullable(),
  providers: z.array(GatewayProvider),
  policies: z.array(Policy),
  guardrails: z.array(Guardrail),
  budget_rules: z.array(BudgetRule),
  /** Defaults to none: snapshots of control-planes older than MCP servers carry no list. */
  mcp_servers: z.array(GatewayMcpServer).default([]),
  /**
   * The latest change among what it holds (its newest `updated_at`; the epoch when it holds nothing):
   * the same on every control-plane replica, so each renders the same pages (see `PagedEndpoint`).
   */
  generated_at: Timestamp,
});
export type GatewaySnapshot = z.infer<typeof GatewaySnapshot>;

/** The longest last_error a heartbeat carries for a cooling provider; the proxy cuts longer ones. */
export const MAX_COOLDOWN_ERROR_LENGTH = 300;

/** The most cooling providers one heartbeat names (those cooling longest first). */
export const MAX_HEARTBEAT_COOLDOWNS = 200;

/** A provider a proxy tries last until `cooling_until`, after failing again and again. */
export const HeartbeatCooldown = z.object({
  account_id: Id,
  provider_id: Id,
  cooling_until: Timestamp,
  last_error: z.string().max(MAX_COOLDOWN_ERROR_LENGTH),
});
export type HeartbeatCooldown = z.infer<typeof HeartbeatCooldown>;

/** `agn.proxy.heartbeat`: a proxy says which endpoints it actively serves, every 10 s. */
export const ProxyHeartbeat = z.object({
  v: z.literal(1),
  proxy_id: z.string().min(1),
  endpoints: z.array(z.string()),
  /**
   * The providers this proxy has cooling down, in the first message of a heartbeat only (a
   * heartbeat split over messages names its endpoints in the others); [] when none. Optional:
   * heartbeats of proxies older than the field are in flight, and a message without it leaves
   * what the proxy said before as it was.
   */
  cooling_providers: z.array(HeartbeatCooldown).max(MAX_HEARTBEAT_COOLDOWNS).optional(),
  at: Timestamp,
});
export type ProxyHeartbeat = z.infer<typeof ProxyHeartbeat>;

/** `agn.config.changed.<account>`: drop the cached snapshot of that account. */
export const ConfigChangedEvent = z.object({ v: z.literal(1), account_id: Id, at: Timestamp });
export type ConfigChangedEvent = z.infer<typeof ConfigChangedEvent>;
