import { envBoolean, envPort, LogLevel, parseEnvWith } from "@agentnet/service-kit";
import { z } from "zod";

export const CliEnv = z.object({
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  /**
   * Use a NATS at NATS_URL that admits clients without credentials. Off: such a server is never
   * joined (anyone on the host could then mint tokens); the stack starts its own on another port.
   */
  AGN_NATS_REUSE_UNAUTHENTICATED: envBoolean.default(false),
  /** An API token for the resource commands (`agentnet providers list`, ...), instead of --token. */
  AGN_TOKEN: z.string().min(1).optional(),
  /** The CLI's own NATS user and password when the stack's bus is not the local one (`bootstrap`). */
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  /**
   * The store. Without a user in it, the stack's own: the server there when it admits the login in
   * `<data>/mongo-credentials.json`, else FerretDB (or mongod) started with that login required.
   */
  MONGO_URL: z.string().default("mongodb://127.0.0.1:27017/agentnet"),
  /**
   * Use a MongoDB at MONGO_URL that admits clients without a login. Off: anyone on the host could
   * read and write every account there; the stack starts its own on another port instead.
   */
  AGN_MONGO_REUSE_UNAUTHENTICATED: envBoolean.default(false),
  /** Set to use a ClickHouse server; unset keeps chDB inside the telemetry process. */
  CLICKHOUSE_URL: z.string().optional(),
  AGN_API_HOST: z.string().default("127.0.0.1"),
  AGN_API_PORT: envPort.default(8080),
  AGN_PROXY_PORT: envPort.default(8090),
  /**
   * Proxy processes sharing each proxy's port (the proxy's own setting, passed on); unset, one.
   * Not one per CPU by default: each worker holds leases of its own (docs/DEPLOY.md).
   */
  AGN_PROXY_WORKERS: z.coerce.number().int().min(1).max(256).optional(),
  /** The demo upstream `up` runs for `quickstart` without a vendor key (loopback only). */
  AGN_DEMO_UPSTREAM_PORT: envPort.default(8091),
  /** Private upstreams the stack's proxy allows besides the demo upstream (self-hosted models). */
  AGN_ALLOWED_PRIVATE_UPSTREAMS: z.string().trim().default(""),
  /** Where started backends and services keep data and logs; the repo's `.data/` by default. */
  AGN_DATA_DIR: z.string().optional(),
  LOG_LEVEL: LogLevel.default("info"),
  /** Seals provider credentials; unset, the local stack keeps a generated one in `<data>/sealing.key`. */
  AGN_SEALING_KEY: z.string().optional(),
});
export type CliEnv = z.infer<typeof CliEnv>;

export const parseEnv = (source: NodeJS.ProcessEnv): CliEnv => parseEnvWith(CliEnv, source);
