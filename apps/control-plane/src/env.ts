import { baseEnv, envPort, parseEnvWith } from "@agentnet/service-kit";
import { z } from "zod";

export const ControlPlaneEnv = z.object({
  ...baseEnv,
  MONGO_URL: z.string().default("mongodb://127.0.0.1:27017/agentnet"),
  HEALTH_PORT: envPort.optional(),
  /** 32 random bytes, base64: seals provider credentials at rest. Required; checked at start. */
  AGN_SEALING_KEY: z.string({ error: "AGN_SEALING_KEY is required (openssl rand -base64 32)" }).min(1),
  VERIFY_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
});
export type ControlPlaneEnv = z.infer<typeof ControlPlaneEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): ControlPlaneEnv => parseEnvWith(ControlPlaneEnv, source);
