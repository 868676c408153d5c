import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const cli = join(import.meta.dirname, "..", "bin", "agentnet.mjs");
const run = (args: string[]) =>
  promisify(execFile)(process.execPath, [cli, ...args], { timeout: 30_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );

describe("the agentnet command line", () => {
  it("prints its version and its help on stdout", async () => {
    expect(await run(["--version"])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^agentnet \d+\.\d+\.\d+\n$/),
    });
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("bootstrap --email <e>");
    expect(help.stderr).toBe("");
  });

  it("answers --help of a command with its usage, without running it", async () => {
    for (const command of ["up", "bootstrap", "reseal", "compose-env"]) {
      const help = await run([command, "--help"]);
      expect(help, command).toMatchObject({ code: 0, stderr: "" });
      expect(help.stdout).toMatch(new RegExp(`^usage: agentnet ${command}`));
    }
  });

  it("says what was wrong with an unknown command or option, with exit code 2", async () => {
    const unknown = await run(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^agentnet: unknown command 'frobnicate'/);
    const option = await run(["bootstrap", "--mail", "x@example.com"]);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/^agentnet: .*--mail/);
    expect(option.stderr).toContain("usage: agentnet bootstrap --email <e>");
  });
});
