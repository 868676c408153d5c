import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openWarehouse, type Warehouse } from "./index.js";

/** An engine the integration suites run against. */
export interface TestEngine {
  title: string;
  engine: Warehouse["engine"];
  open(database: string): Promise<Warehouse>;
}

/** A fresh database name per suite: isolation by new names, never by truncation. */
export function freshDatabase(): string {
  return `agn_test_${randomUUID().replaceAll("-", "")}`;
}

const tempDirs: string[] = [];

/** A temp dir removed by removeTempDirs() (call it in the file's top-level afterAll). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

// One chDB data dir per test file: a process may only hold one, and vitest runs each
// file in its own worker process.
let chdbDir: string | undefined;
export function chdbDataDir(): string {
  chdbDir ??= tempDir("agn-clickhouse-");
  return chdbDir;
}

const serverUrl = process.env.CLICKHOUSE_URL;

/** chDB always; the server only when CLICKHOUSE_URL is set (then it is registered too). */
export const testEngines: TestEngine[] = [
  {
    title: "chdb (in-process, temp data dir)",
    engine: "chdb",
    open: (database) => openWarehouse({ dataDir: chdbDataDir(), database }),
  },
  ...(serverUrl === undefined
    ? []
    : [
        {
          title: "server (CLICKHOUSE_URL)",
          engine: "server" as const,
          open: (database: string) => openWarehouse({ url: serverUrl, database }),
        },
      ]),
];

/** Names the engines in the suite title, saying why the server is absent when it is. */
export const enginesTitle =
  serverUrl === undefined
    ? "chdb only (server suite is registered only when CLICKHOUSE_URL is set)"
    : "chdb and the ClickHouse server at CLICKHOUSE_URL";
