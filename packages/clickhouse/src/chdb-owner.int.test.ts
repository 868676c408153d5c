import { type ChildProcessByStdio, spawn } from "node:child_process";
import { once } from "node:events";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openWarehouse } from "./index.js";
import { freshDatabase, removeTempDirs, tempDir } from "./test-engines.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

/** Another process with `dir` open in chDB, as a second telemetry on the same volume would be. */
async function holdDataDir(dir: string): Promise<ChildProcessByStdio<null, Readable, null>> {
  const script = `
    import { Session } from "chdb";
    const session = new Session(process.argv[1]);
    await session.queryAsync("SELECT 1");
    console.log("holding");
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script, dir], {
    cwd: packageDir,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await Promise.race([
    once(child.stdout, "data"),
    once(child, "exit").then(() => {
      throw new Error("the holding process exited");
    }),
  ])) as [Buffer];
  expect(line.toString().trim()).toBe("holding");
  return child;
}

describe("a chDB data dir and its one process", () => {
  afterAll(removeTempDirs);

  it("refuses a second process on the same dir by name, and opens it once the first was killed", async () => {
    const dir = tempDir("agn-chdb-owner-");
    const owner = await holdDataDir(dir);
    try {
      await expect(openWarehouse({ dataDir: dir, database: freshDatabase() })).rejects.toThrow(
        `chDB data dir ${dir} is in use by another process (PID ${owner.pid})`,
      );
    } finally {
      owner.kill("SIGKILL");
      await once(owner, "exit");
    }
    // kill -9 leaves the status file behind but not its lock: a restarted telemetry starts.
    const warehouse = await openWarehouse({ dataDir: dir, database: freshDatabase() });
    expect(await warehouse.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    await warehouse.close();
  });
});
