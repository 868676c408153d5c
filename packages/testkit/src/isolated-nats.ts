import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { natsAnswers, startProcess, waitUntil } from "@agentnet/local-backends";

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });

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
