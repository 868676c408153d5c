import { request } from "@agentnet/bus";
import { type BootstrapAccountReply, ControlPlane } from "@agentnet/contracts";
import { connectCli } from "../bus-credentials";
import type { CliEnv } from "../env";

/** `agentnet bootstrap --email <e>`: a new account, its owner and the owner's first API token. */
export async function bootstrap(env: CliEnv, email: string, name?: string): Promise<BootstrapAccountReply> {
  const nc = await connectCli(env);
  try {
    return await request(nc, ControlPlane.accountsBootstrap, { email, ...(name ? { name } : {}) });
  } finally {
    await nc.drain();
  }
}
