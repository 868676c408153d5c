import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";

export interface ServiceSpec {
  name: string;
  /** The app folder under `apps/`. */
  app: string;
  /** The entry file within the app; `src/main.ts` unless given. */
  entry?: string;
  env: Record<string, string>;
  /** Node flags the service's process runs with (heap tuning its README explains). */
  nodeArgs?: string[];
  /** What `up` prints once the service is ready, e.g. its address. */
  address: string;
  /** Where it listens for clients, for `agentnet status` to probe; none for the bus-only services. */
  listens?: { kind: "api-gateway" | "gateway-proxy" | "demo-upstream"; url: string };
}

export interface RunningService {
  spec: ServiceSpec;
  child: ChildProcess;
  /** Resolves once the service logged that it is ready; rejects if it exits first. */
  ready: Promise<void>;
  exited: Promise<number | null>;
}

/**
 * Every service process that has not exited: killed if `up` exits without stopping it, so none
 * outlives the stack. One exit listener for all of them (a cluster runs more than Node's default
 * limit of ten listeners).
 */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

const tsxLoader = () => createRequire(import.meta.url).resolve("tsx");

/** A service that exited before it was ready: `reason` says how and why (`failureReason`), and names its log file. */
export class ServiceStartFailure extends Error {
  constructor(
    readonly service: string,
    readonly reason: string,
  ) {
    super(`${service} ${reason}`);
  }
}

/** How much of a service's reason a failure to start quotes; its log has the rest. */
const REASON_SHOWN = 400;
/** How many of a service's last lines are kept to find its reason in. */
const LINES_KEPT = 50;
/** How long after a service exited its output may take to end before its reason is read. */
const OUTPUT_END_WAIT_MS = 2_000;
/** pino's level of `error` (and above it, `fatal`). */
const PINO_ERROR = 50;

/**
 * Why a service exited, from its last lines of output, in this order: its last error or fatal log
 * line carrying an error (message and error: a `node:cluster` primary's own line about a worker
 * that failed carries none, the worker's does), else the last error Node printed uncaught with the
 * lines of its message (not its stack), else its last error or fatal log line, else its last line.
 */
export function failureReason(lines: readonly string[]): string {
  let uncaught: string | undefined;
  let logged: string | undefined;
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index] ?? "";
    if (line.startsWith("{")) {
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
        if ((entry.level ?? 0) < PINO_ERROR) continue;
        if (entry.err?.message) return [entry.msg, entry.err.message].filter(Boolean).join(": ");
        logged ??= entry.msg;
      } catch {}
    } else if (uncaught === undefined && /^[A-Za-z]*Error\b/.test(line)) {
      const rest = lines.slice(index + 1);
      const stack = rest.findIndex((next) => /^\s+at /.test(next) || next.trim() === "");
      const message = rest.slice(0, stack === -1 ? rest.length : stack).map((next) => next.trim());
      uncaught = [line, message.join("; ")].filter(Boolean).join(" ");
    }
  }
  return uncaught ?? logged ?? lines.at(-1) ?? "it printed nothing";
}

/**
 * Starts one service as its own process (TypeScript through tsx), its JSON log lines appended to
 * `<logDir>/<name>.log`. Readiness is the service's own word: the log line carrying `"ready":true`,
 * which every service writes once its connections are up.
 */
export function startService(spec: ServiceSpec, root: string, logDir: string): RunningService {
  mkdirSync(logDir, { recursive: true });
  const log = createWriteStream(join(logDir, `${spec.name}.log`), { flags: "a" });
  const child = spawn(
    process.execPath,
    [
      ...(spec.nodeArgs ?? []),
      "--import",
      tsxLoader(),
      join(root, "apps", spec.app, spec.entry ?? join("src", "main.ts")),
    ],
    {
      cwd: root,
      env: { ...process.env, ...spec.env },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: a Ctrl-C in the terminal reaches `up` alone, which then stops the
      // services in order (edges first) instead of every one dying at once.
      detached: true,
    },
  );
  running.add(child);
  child.once("exit", () => running.delete(child));
  // Its last lines on either stream, for the reason it gives when it exits before it is ready.
  const lastLines: string[] = [];
  const keep = (line: string) => {
    log.write(`${line}\n`);
    if (lastLines.push(line) > LINES_KEPT) lastLines.shift();
  };
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr ?? process.stdin }).on("line", keep);
    createInterface({ input: child.stdout ?? process.stdin }).on("line", (line) => {
      keep(line);
      if (line.includes('"ready":true')) resolve();
    });
    child.once("exit", (code, signal) => {
      const fail = () =>
        reject(
          new ServiceStartFailure(
            spec.name,
            `exited (${signal ? `signal ${signal}` : `code ${code}`}) before it was ready (${failureReason(lastLines).slice(0, REASON_SHOWN)}); see ${join(logDir, `${spec.name}.log`)}`,
          ),
        );
      // Its last lines are in once both streams have ended ("close"), unless a process it left
      // holds them open: then after a moment.
      const timer = setTimeout(fail, OUTPUT_END_WAIT_MS);
      child.once("close", () => {
        clearTimeout(timer);
        fail();
      });
    });
  });
  // A stack that stops while this service starts never awaits its readiness.
  ready.catch(() => undefined);
  return { spec, child, ready, exited };
}

/** SIGTERM, then SIGKILL after `graceMs` if the service has not drained by then. */
export async function stopService(service: RunningService, graceMs = 10_000): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill("SIGTERM");
  const timer = setTimeout(() => service.child.kill("SIGKILL"), graceMs);
  await service.exited;
  clearTimeout(timer);
}
