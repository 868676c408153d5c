import { baseEnv, envBoolean, envPort, httpServerEnv, parseEnvWith } from "@agentnet/service-kit";
import { z } from "zod";

export const ApiGatewayEnv = z.object({
  ...baseEnv,
  ...httpServerEnv,
  AGN_API_HOST: z.string().default("127.0.0.1"),
  AGN_API_PORT: envPort.default(8080),
  /**
   * How long a resolved token is trusted without asking the control-plane again. Revocations reach
   * the cache at once over the bus; this bounds one that never arrived (a connection that stalled).
   */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  /** Largest accepted JSON body, in bytes. */
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1_024).default(1_048_576),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  /**
   * Requests a minute one client address may make to the public sign-in and agent-credential
   * endpoints (`/api/auth/oidc/*`, `/api/auth/device/*`, `/api/auth/token`); 0 turns the bound off.
   */
  AGN_AUTH_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).max(100_000).default(120),
  /** Take the client address from `X-Forwarded-For` (behind a load balancer you trust). */
  AGN_TRUST_PROXY: envBoolean.default(false),
  /** Built dashboard directory (apps/dashboard/dist) served at /; empty or unset serves none. */
  AGN_DASHBOARD_DIR: z
    .string()
    .trim()
    .transform((v) => (v === "" ? undefined : v))
    .optional(),
});
export type ApiGatewayEnv = z.infer<typeof ApiGatewayEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): ApiGatewayEnv => parseEnvWith(ApiGatewayEnv, source);
