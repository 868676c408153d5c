import { readFileSync } from "node:fs";
import type { Logger } from "@agentnet/service-kit";

/** The process's limit on open file descriptors (RLIMIT_NOFILE); undefined for no limit. */
export interface OpenFileLimit {
  soft: number | undefined;
  hard: number | undefined;
}

/** Descriptors the proxy holds besides its connections: NATS, DNS, its metrics listener, logs. */
export const OTHER_OPEN_FILES = 64;

/** The "Max open files" line of Linux's `/proc/<pid>/limits`; undefined when it has none. */
export function parseOpenFileLimit(limits: string): OpenFileLimit | undefined {
  const line = limits.split("\n").find((row) => row.startsWith("Max open files"));
  const [soft, hard] = line?.slice("Max open files".length).trim().split(/\s+/) ?? [];
  if (soft === undefined || hard === undefined) return undefined;
  const value = (field: string) => (field === "unlimited" ? undefined : Number(field));
  return { soft: value(soft), hard: value(hard) };
}

/**
 * Descriptors a busy proxy needs at most with one origin at its bound: a socket per client
 * connection, one per upstream connection (HTTP/1.1, the worst case), and the rest it holds.
 */
export const openFilesNeeded = (connectionsPerOrigin: number, clientConnections: number): number =>
  connectionsPerOrigin + clientConnections + OTHER_OPEN_FILES;

/**
 * Logs the limit beside the bounds it must hold, and warns when they do not fit. Node raises its
 * soft limit to the hard one as it starts (it cannot be raised from JavaScript), so the limit read
 * here is the hard limit the process was given: `ulimit -n`, systemd's `LimitNOFILE`, a
 * container's `nofile` (docs/DEPLOY.md).
 */
export function reportOpenFileLimit(
  logger: Logger,
  connectionsPerOrigin: number,
  clientConnections: number,
  read: () => string = () => readFileSync("/proc/self/limits", "utf8"),
): void {
  let limit: OpenFileLimit | undefined;
  try {
    limit = parseOpenFileLimit(read());
  } catch {
    // Not Linux: nothing to read the limit from.
  }
  const needed = openFilesNeeded(connectionsPerOrigin, clientConnections);
  const report = {
    open_files_soft: limit?.soft ?? "unlimited",
    open_files_hard: limit?.hard ?? "unlimited",
    upstream_connections_per_origin: connectionsPerOrigin,
    client_connections_max: clientConnections,
    open_files_needed: needed,
  };
  if (!limit) {
    logger.info({ upstream_connections_per_origin: connectionsPerOrigin }, "open file limit unknown");
    return;
  }
  if (limit.soft !== undefined && limit.soft < needed) {
    logger.warn(
      report,
      "the open file limit is below what one upstream origin at AGN_UPSTREAM_CONNECTIONS_PER_ORIGIN and HTTP_MAX_CONNECTIONS clients need: raise it (ulimit -n, LimitNOFILE, the container's nofile) or lower them; past it new connections fail",
    );
    return;
  }
  logger.info(report, "open file limit");
}
