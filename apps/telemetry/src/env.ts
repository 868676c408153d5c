import { join } from "node:path";
import { findRepoRoot } from "@agentnet/local-backends";
import { baseEnv, parseEnvWith, requestStreamEnv } from "@agentnet/service-kit";
import { z } from "zod";

const positiveInt = z.coerce.number().int().min(1);

export const TelemetryEnv = z
  .object({
    ...baseEnv,
    ...requestStreamEnv,
    /** A ClickHouse server; unset means chDB in this process under CHDB_DATA_DIR. */
    CLICKHOUSE_URL: z.string().url().optional(),
    CLICKHOUSE_DATABASE: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .default("agentnet"),
    CLICKHOUSE_USER: z.string().optional(),
    CLICKHOUSE_PASSWORD: z.string().optional(),
    /** Root of local data; chDB goes to <AGN_DATA_DIR>/chdb unless CHDB_DATA_DIR says otherwise. */
    AGN_DATA_DIR: z.string().min(1).optional(),
    CHDB_DATA_DIR: z.string().min(1).optional(),
    /** Larger batches mean fewer, larger parts and far less per-insert overhead in the engine. */
    TELEMETRY_BATCH_SIZE: positiveInt.default(10_000),
    TELEMETRY_FLUSH_INTERVAL_MS: positiveInt.default(250),
    /** How often access-log retention is swept. */
    TELEMETRY_RETENTION_INTERVAL_MS: positiveInt.default(3_600_000),
    /** How often usage and log counts are rolled into hours (the overview and counts read those). */
    TELEMETRY_ROLLUP_INTERVAL_MS: positiveInt.default(60_000),
  })
  .transform(({ AGN_DATA_DIR, CHDB_DATA_DIR, ...env }) => ({
    ...env,
    CHDB_DATA_DIR: CHDB_DATA_DIR ?? join(AGN_DATA_DIR ?? join(findRepoRoot(), ".data"), "chdb"),
  }));
export type TelemetryEnv = z.output<typeof TelemetryEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): TelemetryEnv => parseEnvWith(TelemetryEnv, source);
