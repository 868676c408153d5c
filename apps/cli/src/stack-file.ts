import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What a running `agentnet up` tells other commands: who runs it, and where its parts really are. */
export interface RunningStack {
  pid: number;
  /** Where the stack's NATS is (it may not be NATS_URL: see ensureNats); empty while starting. */
  nats_url: string;
}

const stackFile = (dataDir: string) => join(dataDir, "stack.json");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** The stack running on `dataDir`, if its process still lives (a stale file from a crash is ignored). */
export function runningStack(dataDir: string): RunningStack | undefined {
  if (!existsSync(stackFile(dataDir))) return undefined;
  try {
    const stack = JSON.parse(readFileSync(stackFile(dataDir), "utf8")) as RunningStack;
    return stack.pid !== process.pid && alive(stack.pid) ? stack : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Claims `dataDir` for this process's stack, before anything starts: a second `agentnet up` on the
 * same data is refused with who runs it, instead of starting services that collide with the first.
 */
export function claimStack(dataDir: string) {
  const other = runningStack(dataDir);
  if (other) {
    throw new Error(
      `a stack is already running on ${dataDir} (agentnet up, pid ${other.pid}${other.nats_url ? `, NATS ${other.nats_url}` : ""}); stop it first (Ctrl-C in its terminal, or kill ${other.pid})`,
    );
  }
  const write = (stack: RunningStack) =>
    writeFileSync(stackFile(dataDir), `${JSON.stringify(stack)}\n`, { mode: 0o600 });
  write({ pid: process.pid, nats_url: "" });
  return {
    setNatsUrl: (natsUrl: string) => write({ pid: process.pid, nats_url: natsUrl }),
    release: () => {
      if (runningStack(dataDir) === undefined) rmSync(stackFile(dataDir), { force: true });
    },
  };
}
