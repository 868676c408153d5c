/**
 * A service for `faults.test.ts`: answers `/ping`, leaves a rejection unhandled on `/reject` and
 * throws out of a callback on `/throw`. Run with `node --import tsx`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { runService } from "./run";

await runService({ name: "faulty", logLevel: "info" }, async ({ lifecycle }) => {
  const server = createServer((req, res) => {
    if (req.url === "/reject") void Promise.reject(new Error("nobody awaited this"));
    if (req.url === "/throw") {
      setImmediate(() => {
        throw new Error("thrown from a callback");
      });
    }
    res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  lifecycle.onStop("server", () => new Promise((resolve) => server.close(resolve)));
  return { port: (server.address() as AddressInfo).port };
});
