import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { bootId, identify, killProcess, stillRuns, stopProcess } from "./processes";

const Identity = { pid: z.number().int(), started_at: z.number(), command: z.string() };

/** When a process of the stack stops: the edges first (they drain), then the other services, the backends last. */
export const StopStage = z.enum(["edge", "service", "backend"]);
export type StopStage = z.infer<typeof StopStage>;

/** How long a process of each stage may take to stop before it is killed. */
const GRACE_MS: Record<StopStage, number> = { edge: 10_000, service: 10_000, backend: 5_000 };

export const StackProcess = z.object({
  ...Identity,
  /** The part it is: `nats-server`, `ferretdb`, a service's name. */
  name: z.string(),
  stage: StopStage,
});
export type StackProcess = z.infer<typeof StackProcess>;

/** A part of the stack other commands reach: `agentnet status` probes each by its kind. */
export const StackEndpoint = z.object({
  /** As `up` prints it: `gateway-proxy`, or `gateway-proxy#2` for a replica; `nats-1` for a node. */
  name: z.string(),
  kind: z.enum(["api-gateway", "gateway-proxy", "demo-upstream", "nats"]),
  url: z.string(),
  /** A NATS node's monitoring listener, whose `/healthz` says whether its JetStream is in the cluster. */
  monitor_url: z.string().optional(),
});
export type StackEndpoint = z.infer<typeof StackEndpoint>;

/**
 * What a running `agentnet up` tells other commands: who runs it (pid, start time and command, so a
 * later process given its pid is not taken for it), and where its parts really are.
 */
export const RunningStack = z.object({
  ...Identity,
  /** The boot the start times count from. */
  boot_id: z.string(),
  /**
   * Where the stack's NATS servers are (not necessarily NATS_URL: see ensureNats): one, or the
   * nodes of `up --cluster`; empty while starting.
   */
  nats_urls: z.array(z.string()),
  /** The listeners of the stack's parts, every replica's own; empty while starting. */
  endpoints: z.array(StackEndpoint),
  /**
   * Every process the stack started and has not seen stop: what the next `up` on the same data
   * stops first when this one was killed before it could.
   */
  processes: z.array(StackProcess),
});
export type RunningStack = z.infer<typeof RunningStack>;

const stackFile = (dataDir: string) => join(dataDir, "stack.json");

function readStack(dataDir: string): RunningStack | undefined {
  if (!existsSync(stackFile(dataDir))) return undefined;
  try {
    return RunningStack.parse(JSON.parse(readFileSync(stackFile(dataDir), "utf8")));
  } catch {
    return undefined;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Whether the `up` a stack file names still runs (without /proc to tell, whether its pid lives). */
const upRuns = (stack: RunningStack) =>
  stack.pid !== process.pid &&
  (stack.command === "" ? alive(stack.pid) : stack.boot_id === bootId() && stillRuns(stack));

/** The stack running on `dataDir`, if its `up` still runs (a stale file from a crash is ignored). */
export function runningStack(dataDir: string): RunningStack | undefined {
  const stack = readStack(dataDir);
  return stack && upRuns(stack) ? stack : undefined;
}

/**
 * Claims `dataDir` for this process's stack, before anything starts: a second `agentnet up` on the
 * same data is refused with who runs it, instead of starting services that collide with the first.
 * The processes a killed `up` left running stay in the file (as this stack's) until `stopLeftovers`
 * has stopped them, so they are not lost if this one is killed too.
 */
export function claimStack(dataDir: string) {
  const previous = readStack(dataDir);
  if (previous && upRuns(previous)) {
    throw new Error(
      `a stack is already running on ${dataDir} (agentnet up, pid ${previous.pid}${previous.nats_urls.length > 0 ? `, NATS ${previous.nats_urls.join(",")}` : ""}); stop it first (Ctrl-C in its terminal, or kill ${previous.pid})`,
    );
  }
  const boot = bootId();
  const leftovers = previous?.boot_id === boot ? previous.processes.filter(stillRuns) : [];
  const self = identify(process.pid);
  let stack: RunningStack = {
    pid: process.pid,
    started_at: self?.started_at ?? 0,
    command: self?.command ?? "",
    boot_id: boot,
    nats_urls: [],
    endpoints: [],
    processes: leftovers,
  };
  // Whole or not at all: other commands read the file while `up` rewrites it.
  const write = () => {
    writeFileSync(`${stackFile(dataDir)}.new`, `${JSON.stringify(stack)}\n`, { mode: 0o600 });
    renameSync(`${stackFile(dataDir)}.new`, stackFile(dataDir));
  };
  write();
  const forget = (pid: number) => {
    stack = { ...stack, processes: stack.processes.filter((recorded) => recorded.pid !== pid) };
    write();
  };
  return {
    /** What the previous `up` on this data (`previous.pid`) left running when it was killed. */
    leftovers: { upPid: previous?.pid, processes: leftovers },
    setNatsUrls: (natsUrls: string[]) => {
      stack = { ...stack, nats_urls: natsUrls };
      write();
    },
    setEndpoints: (endpoints: StackEndpoint[]) => {
      stack = { ...stack, endpoints };
      write();
    },
    /** Records a process this stack started, as /proc shows it right after the start. */
    record: (name: string, stage: StopStage, pid: number | undefined) => {
      const identity = pid === undefined ? undefined : identify(pid);
      if (!identity) return;
      stack = { ...stack, processes: [...stack.processes, { ...identity, name, stage }] };
      write();
    },
    forget,
    /** Stops the leftovers stage by stage, edges first, each with its grace before it is killed. */
    stopLeftovers: async () => {
      for (const stage of StopStage.options) {
        await Promise.all(
          leftovers
            .filter((leftover) => leftover.stage === stage)
            .map(async (leftover) => {
              await stopProcess(leftover, GRACE_MS[stage]);
              forget(leftover.pid);
            }),
        );
      }
    },
    /** SIGKILLs every recorded process that still runs: the stop at once. */
    killAll: () => {
      for (const recorded of stack.processes) killProcess(recorded);
    },
    release: () => {
      if (runningStack(dataDir) === undefined) rmSync(stackFile(dataDir), { force: true });
    },
  };
}

/** What `claimStack` returns: the stack file of this `up`, kept as its processes start and stop. */
export type StackClaim = ReturnType<typeof claimStack>;
