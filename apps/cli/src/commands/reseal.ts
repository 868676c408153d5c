import { request } from "@agentnet/bus";
import { ControlPlane, type ReplyOf } from "@agentnet/contracts";
import { connectCli } from "../bus-credentials";
import type { CliEnv } from "../env";

/**
 * `agentnet reseal`: the control-plane re-seals every provider credential with the first key of
 * its AGN_SEALING_KEY, so the keys after it can be dropped.
 */
export async function reseal(env: CliEnv): Promise<ReplyOf<typeof ControlPlane.sealingReseal>> {
  const nc = await connectCli(env);
  try {
    return await request(nc, ControlPlane.sealingReseal, {}, { timeoutMs: 120_000 });
  } finally {
    await nc.drain();
  }
}
