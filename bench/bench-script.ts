import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Runs a benchmark's `main` and exits: with the `process.exitCode` it set when it finished (0 unless
 * it found a run wrong), 1 with its error printed when it threw.
 */
export const runBench = (main: () => Promise<void>) =>
  main().then(
    () => process.exit(),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );

/**
 * Runs another script of bench/ in its own process through tsx, as the part of the system it plays
 * (a service, a publisher) would run: `env` on top of this process's, `nodeArgs` for node, its
 * stdout piped back for what it reports, its stderr shown.
 */
export const spawnBenchScript = (script: string, env: Record<string, string>, nodeArgs: string[] = []) =>
  spawn(join(ROOT, "node_modules", ".bin", "tsx"), [...nodeArgs, join(ROOT, "bench", script)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
