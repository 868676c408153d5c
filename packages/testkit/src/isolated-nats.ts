import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, natsAnswers, startProcess, waitUntil } from "@agentnet/local-backends";

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
    const storeDir = mkdtempSync(join(tmpdir(), "agn-test-nats-"));
    const url = `nats://127.0.0.1:${port}`;
    const server = startProcess(
      "nats-server",
      "nats-server",
      ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir],
      join(storeDir, "logs"),
    );
    process.once("exit", () => {
      server.child.kill("SIGKILL");
      rmSync(storeDir, { recursive: true, force: true });
    });
    await waitUntil(() => natsAnswers(url), 15_000, `test nats-server on port ${port}`);
    return url;
  })();
  return serving;
}
