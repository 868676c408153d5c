import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { natsServerBinary } from "./backends";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "agn-nats-binary-"));
  dirs.push(dir);
  return dir;
};
const executable = (dir: string, name: string) => writeFileSync(join(dir, name), "", { mode: 0o755 });

/** A PATH holding only `sh` (which the lookup runs) and what the test puts beside it. */
const pathWithOnlySh = () => {
  const dir = tempDir();
  symlinkSync("/bin/sh", join(dir, "sh"));
  vi.stubEnv("PATH", dir);
  return dir;
};

afterEach(() => {
  vi.unstubAllEnvs();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the nats-server binary", () => {
  it("is the one setup.sh built into the tools directory, even when another is on PATH", () => {
    const tools = tempDir();
    executable(tools, "nats-server");
    executable(pathWithOnlySh(), "nats-server");
    expect(natsServerBinary(tools)).toBe(join(tools, "nats-server"));
  });

  it("is nats-server on PATH when the tools directory has none", () => {
    executable(pathWithOnlySh(), "nats-server");
    expect(natsServerBinary(tempDir())).toBe("nats-server");
  });

  it("is an error saying to run setup.sh when there is neither", () => {
    pathWithOnlySh();
    expect(() => natsServerBinary(tempDir())).toThrow("run: bash infra/local/setup.sh");
  });
});
