import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";

export interface Backend {
  /** The URL clients use. */
  url: string;
  /** `external` when something already answered there; `started` when we started it. */
  origin: "external" | "started";
  /** What serves it, e.g. `nats-server`, `ferretdb (sqlite)`. */
  engine: string;
  /** The process serving it, when started here (benchmarks read its CPU time). */
  pid?: number | undefined;
  stop(): Promise<void>;
}

export const externalBackend = (url: string, engine: string): Backend => ({
  url,
  origin: "external",
  engine,
  stop: async () => undefined,
});

/**
 * Starts a child that logs to `<logDir>/<name>.log` and is stopped with SIGTERM (SIGKILL after
 * `graceMs`). The child is also killed when this process exits, so no backend outlives the stack.
 * `env` adds to this process's environment: the place for secrets, which a command line would show
 * to every user of the host (`/proc/<pid>/cmdline`).
 */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  logDir: string,
  env: Record<string, string> = {},
): { child: ChildProcess; stop: () => Promise<void> } {
  mkdirSync(logDir, { recursive: true });
  // The log file itself, not a pipe through this process: a Go server writing to a pipe whose
  // reader died (a SIGKILLed `agentnet up`) dies of SIGPIPE at its next log line, and a backend
  // left running must keep its data and ports until the next `up` stops it.
  const log = openSync(join(logDir, `${name}.log`), "a");
  // Its own process group: a Ctrl-C in the terminal must not stop a backend before the services
  // using it have drained.
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", log, log],
    detached: true,
  });
  closeSync(log);
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const stop = async (graceMs = 5_000) => {
    process.removeListener("exit", killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return { child, stop: () => stop() };
}
