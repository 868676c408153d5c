import { parsePrivateUpstreamAllowance } from "@agentnet/gateway-rules";
import { baseEnv, envCheckedList, envPort, parseEnvWith } from "@agentnet/service-kit";
import { z } from "zod";

const privateWebhookList = envCheckedList((entries) => parsePrivateUpstreamAllowance(entries).problems);

export const ControlPlaneEnv = z.object({
  ...baseEnv,
  MONGO_URL: z.string().default("mongodb://127.0.0.1:27017/agentnet"),
  HEALTH_PORT: envPort.optional(),
  /** 32 random bytes, base64: seals provider credentials at rest. Required; checked at start. */
  AGN_SEALING_KEY: z.string({ error: "AGN_SEALING_KEY is required (openssl rand -base64 32)" }).min(1),
  VERIFY_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  /**
   * Private addresses webhooks may be sent to anyway (receivers on the operator's network),
   * comma-separated: ranges (`10.0.0.0/8`), addresses, `address:port` (`127.0.0.1:9000`) and
   * `name:port` (`hooks.lan:8080`). Every other loopback, private, link-local, ... address is refused.
   */
  AGN_ALLOWED_PRIVATE_WEBHOOKS: privateWebhookList,
  /** One webhook attempt's deadline, connection to last byte. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** How long a proxy token minted for an agent (`agentnet token`) lives. */
  AGN_AGENT_TOKEN_TTL_SECONDS: z.coerce.number().int().min(10).max(86_400).default(900),
  /**
   * How old a change's intent without its audit entry is before recovery writes the entry: well
   * past the longest a change takes (a provider's check waits 15 s), so a slow change is not taken
   * for a stopped one.
   */
  AGN_AUDIT_RECOVER_AFTER_SECONDS: z.coerce.number().min(0.1).default(120),
  /**
   * How long an identity provider's word on a signed-in user holds: past it, the control-plane asks
   * the provider again with the refresh token of the user's latest sign-in, and a refusal ends their
   * sessions and agent credentials. At least a minute: longer than a refresh may take, so a grant
   * being asked about is never claimed again by another replica.
   */
  AGN_IDP_RECHECK_SECONDS: z.coerce.number().min(60).max(86_400).default(900),
  /** For the audit fault test only: the action whose change kills the process before its entry. */
  AGN_FAULT_CRASH_BEFORE_AUDIT_ENTRY: z.string().min(1).optional(),
});
export type ControlPlaneEnv = z.infer<typeof ControlPlaneEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): ControlPlaneEnv => parseEnvWith(ControlPlaneEnv, source);
