import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The workspace root: the nearest folder above this file holding pnpm-workspace.yaml. */
export function findRepoRoot(start = dirname(fileURLToPath(import.meta.url))): string {
  let dir = start;
  while (!existsSync(join(dir, "pnpm-workspace.yaml"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no pnpm-workspace.yaml above ${start}`);
    dir = parent;
  }
  return dir;
}

export const defaultDataDir = () => join(findRepoRoot(), ".data");

/** Where infra/local/setup.sh puts the binaries it builds (nats-server, FerretDB, helm). */
export const defaultToolsDir = () => join(defaultDataDir(), "tools");
