import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, natsAnswers, startProcess, waitUntil } from "@agentnet/local-backends";
import { inject } from "vitest";
import "./provided";

let serving: Promise<string> | undefined;

/**
 * A nats-server (JetStream on) of this test file alone. Services started in process join queue
 * groups by name; on a NATS shared by test files running in parallel, another file's instance
 * (wired to its own fakes) could answer this file's requests. One server per file rules that out.
 * Started on first use, stopped when the test process exits.
 */
export function isolatedNatsUrl(): Promise<string> {
  serving ??= (async () => {
    const port = await freePort();
    // Inside the run's directory, so the global teardown finds and stops it even when the worker
    // was killed before its exit handler ran.
    const storeDir = mkdtempSync(join(inject("runDir"), "nats-"));
    const url = `nats://127.0.0.1:${port}`;
    const server = startProcess(
      "nats-server",
      "nats-server",
      ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir],
      join(storeDir, "logs"),
    );
    writeFileSync(join(storeDir, "pid"), String(server.child.pid ?? ""));
    process.once("exit", () => {
      server.child.kill("SIGKILL");
      rmSync(storeDir, { recursive: true, force: true });
    });
    await waitUntil(() => natsAnswers(url), 15_000, `test nats-server on port ${port}`);
    return url;
  })();
  return serving;
}
