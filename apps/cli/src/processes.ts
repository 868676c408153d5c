import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { portIsFree } from "@agentnet/local-backends";

/**
 * One process, told apart from any later one the kernel gives the same pid: a pid alone is reused,
 * a pid with its start time and command line is not (and the boot says which clock the start time
 * counts on). Read from /proc; where there is none, no process can be identified, so none is ever
 * stopped by its record.
 */
export interface ProcessIdentity {
  pid: number;
  /** When it started: clock ticks after boot, /proc/<pid>/stat field 22. */
  started_at: number;
  /** Its command line, arguments joined by spaces. */
  command: string;
}

/** This boot of the machine: start times from another boot say nothing about processes now. */
export function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "";
  }
}

/** The process `pid` is now; undefined once it has exited (a zombie has exited, only not been reaped). */
export function identify(pid: number): ProcessIdentity | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: the fields after its closing one are fixed,
    // starting with field 3 (the state), so field 22 is the 20th of them.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    if (fields[0] === "Z" || command === "") return undefined;
    return { pid, started_at: Number(fields[19]), command };
  } catch {
    return undefined;
  }
}

/** Whether the process `recorded` describes still runs: the same pid, start time and command. */
export function stillRuns(recorded: ProcessIdentity): boolean {
  const now = identify(recorded.pid);
  return now?.started_at === recorded.started_at && now.command === recorded.command;
}

const signal = (recorded: ProcessIdentity, name: NodeJS.Signals) => {
  if (!stillRuns(recorded)) return;
  try {
    process.kill(recorded.pid, name);
  } catch {
    // exited meanwhile
  }
};

/** SIGKILL, when the process still runs. */
export const killProcess = (recorded: ProcessIdentity) => signal(recorded, "SIGKILL");

/**
 * Stops a process this one did not start (so no exit event tells when it is gone): SIGTERM, then
 * SIGKILL if it still runs after `graceMs`; resolves once it is gone.
 */
export async function stopProcess(recorded: ProcessIdentity, graceMs: number): Promise<void> {
  signal(recorded, "SIGTERM");
  const killAt = Date.now() + graceMs;
  while (stillRuns(recorded)) {
    if (Date.now() >= killAt) killProcess(recorded);
    await new Promise((wake) => setTimeout(wake, 50));
  }
}

/**
 * Fails, naming who holds it, when a port a part of the stack is to listen on is taken: the part
 * would otherwise exit with a log line saying less.
 */
export async function ensurePortsFree(
  ports: { part: string; host: string; port: number; variable: string }[],
): Promise<void> {
  for (const { part, host, port, variable } of ports) {
    if (await portIsFree(host, port)) continue;
    const holders = listeners(port).map((holder) => `pid ${holder.pid} (${holder.command})`);
    throw new Error(
      `port ${port} for the ${part} (${variable}) is taken by ${holders.join(", ") || "a process of another user"}; stop it or set ${variable}`,
    );
  }
}

/** The processes with a socket listening on TCP `port`: /proc/net/tcp* names the socket, /proc/<pid>/fd its owner. */
function listeners(port: number): ProcessIdentity[] {
  const sockets = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let lines: string[];
    try {
      lines = readFileSync(table, "utf8").trim().split("\n").slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      const LISTEN = "0A";
      if (state === LISTEN && Number.parseInt(local?.split(":")[1] ?? "", 16) === port && inode) {
        sockets.add(`socket:[${inode}]`);
      }
    }
  }
  if (sockets.size === 0) return [];
  const found: ProcessIdentity[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let descriptors: string[];
    try {
      descriptors = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    const holds = descriptors.some((fd) => {
      try {
        return sockets.has(readlinkSync(`/proc/${entry}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    const holder = holds ? identify(Number(entry)) : undefined;
    if (holder) found.push(holder);
  }
  return found;
}

const MAX_RESTART_DELAY_MS = 30_000;

/** The wait before restarting a process that failed `failures` times in a row: 1 s, doubling to 30 s. */
export const restartDelayMs = (failures: number) => Math.min(MAX_RESTART_DELAY_MS, 1_000 * 2 ** failures);
