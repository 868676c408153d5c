import type { ChildProcess } from "node:child_process";
import { type NatsNode, nodeHealthy } from "./nats-cluster";
import { restartDelayMs } from "./processes";
import type { StackClaim } from "./stack-file";

export interface SupervisedNode {
  /** Stops the node for good (SIGTERM, SIGKILL after a grace): no restart follows. */
  stop: () => Promise<void>;
}

/** A node that ran this long before dying starts again after the shortest delay. */
const STABLE_AFTER_MS = 30_000;

/**
 * Starts a node of the local NATS cluster and starts it again, with backoff, whenever it dies
 * while the stack runs: the cluster carries on with two nodes meanwhile, and the restarted node
 * catches up on its streams from the others. Its pid is in the stack file while it runs.
 */
export function superviseNode(
  node: NatsNode,
  context: {
    claim: Pick<StackClaim, "record" | "forget">;
    print: (name: string, text: string) => void;
    isStopping: () => boolean;
  },
): SupervisedNode {
  let failures = 0;
  const run = () => {
    const started = node.start();
    const startedAt = Date.now();
    const { pid } = started.child;
    context.claim.record(node.name, "backend", pid);
    started.child.once("exit", (code, signal) => {
      if (pid !== undefined) context.claim.forget(pid);
      if (context.isStopping()) return;
      failures = Date.now() - startedAt >= STABLE_AFTER_MS ? 0 : failures + 1;
      const delayMs = restartDelayMs(Math.max(0, failures - 1));
      context.print(node.name, `exited (${signal ?? `code ${code}`}); restarting in ${delayMs / 1000} s`);
      setTimeout(() => {
        if (context.isStopping()) return;
        current = run();
        void announceHealthy(current.child);
      }, delayMs);
    });
    return started;
  };
  const announceHealthy = async (child: ChildProcess) => {
    for (let attempt = 0; attempt < 150 && child.exitCode === null && !context.isStopping(); attempt++) {
      if (await nodeHealthy(node)) {
        context.print(node.name, `restarted: ${node.url}`);
        return;
      }
      await new Promise((wake) => setTimeout(wake, 200));
    }
  };
  let current = run();
  return { stop: () => current.stop() };
}
