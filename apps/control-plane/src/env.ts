import { baseEnv, envPort, parseEnvWith } from "@agentnet/service-kit";
import { z } from "zod";

export const ControlPlaneEnv = z.object({
  ...baseEnv,
  MONGO_URL: z.string().default("mongodb://127.0.0.1:27017/agentnet"),
  HEALTH_PORT: envPort.optional(),
});
export type ControlPlaneEnv = z.infer<typeof ControlPlaneEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): ControlPlaneEnv => parseEnvWith(ControlPlaneEnv, source);
