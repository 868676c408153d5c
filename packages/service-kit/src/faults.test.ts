import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";

const FIXTURE = join(import.meta.dirname, "faults.fixture.ts");

interface LogLine {
  level: number;
  msg: string;
  err?: { message: string };
  port?: number;
}

/** The fixture service as its own process, its JSON log lines collected as they come. */
async function startFaultyService() {
  const child = spawn(
    process.execPath,
    ["--import", createRequire(import.meta.url).resolve("tsx"), FIXTURE],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const lines: LogLine[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(JSON.parse(line) as LogLine);
  });
  const logged = async (msg: RegExp) => {
    const deadline = Date.now() + 20_000;
    while (!lines.some((line) => msg.test(line.msg))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never logged ${msg}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return lines.find((line) => msg.test(line.msg)) as LogLine;
  };
  const ready = await logged(/ready/);
  const get = (path: string) => fetch(`http://127.0.0.1:${ready.port}${path}`);
  return { child, lines, logged, get };
}

let running: ChildProcess | undefined;
afterEach(() => {
  if (running?.exitCode === null) running.kill("SIGKILL");
});

describe("errors nothing caught, in a service started by runService", () => {
  it("logs an unhandled rejection and keeps serving", async () => {
    const service = await startFaultyService();
    running = service.child;
    expect((await service.get("/reject")).status).toBe(200);
    const line = await service.logged(/unhandled rejection/);
    expect(line).toMatchObject({ level: 50, err: { message: "nobody awaited this" } });
    expect(await (await service.get("/ping")).text()).toBe("ok");

    service.child.kill("SIGTERM");
    const [code] = await once(service.child, "close");
    expect(code).toBe(0);
  });

  it("logs an uncaught exception and exits 1, its state no longer trusted", async () => {
    const service = await startFaultyService();
    running = service.child;
    // "close" comes after the last log line was read.
    const exited = once(service.child, "close");
    await service.get("/throw");
    const [code] = await exited;
    expect(code).toBe(1);
    expect(service.lines.at(-1)).toMatchObject({
      level: 60,
      msg: expect.stringMatching(/uncaught exception/),
      err: { message: "thrown from a callback" },
    });
  });
});
