import { z } from "zod";
import { BudgetRule } from "./budget-rules";
import { Id, SealedSecret, Timestamp } from "./common";
import { Guardrail } from "./guardrails";
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
  /** Groups of the account by id, so deny logs and stamping can name them. */
  generated_at: Timestamp,
});
export type GatewaySnapshot = z.infer<typeof GatewaySnapshot>;

/** `agn.proxy.heartbeat`: a proxy says which endpoints it actively serves, every 10 s. */
export const ProxyHeartbeat = z.object({
  v: z.literal(1),
  proxy_id: z.string().min(1),
  endpoints: z.array(z.string()),
  at: Timestamp,
});
export type ProxyHeartbeat = z.infer<typeof ProxyHeartbeat>;

/** `agn.config.changed.<account>`: drop the cached snapshot of that account. */
export const ConfigChangedEvent = z.object({ v: z.literal(1), account_id: Id, at: Timestamp });
export type ConfigChangedEvent = z.infer<typeof ConfigChangedEvent>;
