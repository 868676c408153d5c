import { envPort, LogLevel, parseEnvWith } from "@agentnet/service-kit";
import { z } from "zod";

export const CliEnv = z.object({
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  MONGO_URL: z.string().default("mongodb://127.0.0.1:27017/agentnet"),
  /** Set to use a ClickHouse server; unset keeps chDB inside the telemetry process. */
  CLICKHOUSE_URL: z.string().optional(),
  AGN_API_HOST: z.string().default("127.0.0.1"),
  AGN_API_PORT: envPort.default(8080),
  AGN_PROXY_PORT: envPort.default(8090),
  /** Where started backends and services keep data and logs; the repo's `.data/` by default. */
  AGN_DATA_DIR: z.string().optional(),
  LOG_LEVEL: LogLevel.default("info"),
  /** Seals provider credentials; unset, the local stack keeps a generated one in `<data>/sealing.key`. */
  AGN_SEALING_KEY: z.string().optional(),
});
export type CliEnv = z.infer<typeof CliEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): CliEnv => parseEnvWith(CliEnv, source);
