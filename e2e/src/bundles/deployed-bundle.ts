import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { BUS_SERVICES, type BusService } from "@agentnet/contracts";
import { findRepoRoot } from "@agentnet/local-backends";

const ROOT = findRepoRoot();
const run = promisify(execFile);

export type BundledApp = Exclude<BusService, "cli">;

/** The apps the Dockerfile builds an image of: every service on the bus but the CLI. */
export const BUNDLED_APPS = BUS_SERVICES.filter((service): service is BundledApp => service !== "cli");

/** Each app's own `build` script (what `pnpm build` runs through turbo): apps/<app>/dist/main.js. */
export async function buildBundles(): Promise<void> {
  await run("pnpm", [...BUNDLED_APPS.flatMap((app) => ["--filter", `@agentnet/${app}`]), "run", "build"], {
    cwd: ROOT,
  });
}

/**
 * The Dockerfile's deploy step into `root` instead of /app: each app with only its production
 * dependencies in `<root>/apps/<app>` (`pnpm deploy --prod`), the ClickHouse migrations in
 * `<root>/infra/clickhouse`. Nothing of the workspace is reachable from there.
 */
export async function deployBundles(root: string): Promise<void> {
  await Promise.all(
    BUNDLED_APPS.map((app) =>
      run(
        "pnpm",
        [
          "--filter",
          `@agentnet/${app}`,
          "--config.inject-workspace-packages=true",
          "deploy",
          "--prod",
          "--offline",
          join(root, "apps", app),
        ],
        { cwd: ROOT },
      ),
    ),
  );
  cpSync(join(ROOT, "infra", "clickhouse"), join(root, "infra", "clickhouse"), { recursive: true });
}

export interface BundleProcess {
  app: BundledApp;
  /** Its stdout and stderr lines so far. */
  output: string[];
  exited: Promise<number | null>;
  /** SIGTERM, as `docker stop` sends; SIGKILL after `graceMs`. Resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * `node [nodeArgs] dist/main.js` in the deployed app's folder, as the image's CMD runs it, with the
 * image's environment and `env` alone: nothing of this test's process (NODE_OPTIONS, a loader)
 * comes along.
 */
export function startBundle(
  root: string,
  app: BundledApp,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): BundleProcess {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, "dist/main.js"], {
    cwd: join(root, "apps", app),
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "production", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream }).on("line", (line) => output.push(line));
  }
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      process.removeListener("exit", killOnExit);
      resolve(code);
    }),
  );
  return {
    app,
    output,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Resolves once `url` answers 200; fails with the process's output when it exits first. */
export async function waitUntilAnswers(
  bundle: BundleProcess,
  url: string,
  timeoutMs = 60_000,
): Promise<void> {
  let exitCode: number | null | undefined;
  void bundle.exited.then((code) => {
    exitCode = code;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) {
      throw new Error(`${bundle.app} exited with ${exitCode}:\n${bundle.output.join("\n")}`);
    }
    const status = await fetch(url).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `${bundle.app}: ${url} did not answer 200 in ${timeoutMs} ms:\n${bundle.output.join("\n")}`,
  );
}
