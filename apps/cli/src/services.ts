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
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout ?? process.stdin });
    lines.on("line", (line) => {
      log.write(`${line}\n`);
      if (line.includes('"ready":true')) resolve();
    });
    void exited.then((code) =>
      reject(
        new Error(
          `${spec.name} exited (code ${code}) before it was ready; see ${join(logDir, `${spec.name}.log`)}`,
        ),
      ),
    );
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
