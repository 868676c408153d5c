import { z } from "zod";
import { ApiFlavor, CatalogProviderId } from "./catalog";

/**
 * One provider the caller can reach. all_models_allowed is true when no model allowlist
 * restricts it for the caller; models then lists the declared or catalog models as a courtesy.
 * Never carries credentials, policy or guardrail configuration.
 */
export const AgentConfigProvider = z.object({
  name: z.string(),
  catalog_id: CatalogProviderId,
  api_flavor: ApiFlavor,
  all_models_allowed: z.boolean(),
  models: z.array(z.string()),
});
export type AgentConfigProvider = z.infer<typeof AgentConfigProvider>;

/**
 * What an agent needs to reach the gateway. configured is false only when the account has no
 * agent-network set up; a caller no policy covers reads true with an empty providers list.
 */
export const AgentConfig = z.object({
  configured: z.boolean(),
  endpoint: z.string(),
  providers: z.array(AgentConfigProvider),
});
export type AgentConfig = z.infer<typeof AgentConfig>;
