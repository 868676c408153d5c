#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `agentnet` works straight from a checkout. Signals are
// passed on, so stopping this process stops the stack the CLI started.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const main = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "main.ts");
const tsx = createRequire(import.meta.url).resolve("tsx");
const child = spawn(process.execPath, ["--import", tsx, main, ...process.argv.slice(2)], {
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
