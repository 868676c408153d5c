import { lookup } from "node:dns/promises";
import { isIpLiteral } from "@agentnet/gateway-rules";
import type { DialFailure } from "../domain/outcomes";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a name resolves to. Injectable so tests can point vendor names at local servers. */
export type ResolveFn = (hostname: string) => Promise<ResolvedAddress[]>;

/** The OS resolver (what any other client on this machine would dial), every address, in its order. */
export const systemResolve: ResolveFn = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

const errorCode = (error: unknown): string =>
  error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : "ENOTFOUND";

/**
 * Resolves a host once, within the check's deadline. The answer is what gets classified and
 * then dialed, so there is no second lookup for DNS rebinding to slip into.
 */
export async function resolveOnce(
  resolve: ResolveFn,
  host: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<{ ok: true; addresses: ResolvedAddress[] } | { ok: false; failure: DialFailure }> {
  if (isIpLiteral(host))
    return { ok: true, addresses: [{ address: host, family: host.includes(":") ? 6 : 4 }] };
  const timedOut = new Promise<"timeout">((resolveTimeout) => {
    if (signal.aborted) resolveTimeout("timeout");
    signal.addEventListener("abort", () => resolveTimeout("timeout"), { once: true });
  });
  try {
    const result = await Promise.race([resolve(host), timedOut]);
    if (result === "timeout")
      return { ok: false, failure: { kind: "timeout", host, timeoutMs, phase: "resolve" } };
    if (result.length === 0) return { ok: false, failure: { kind: "unresolvable", host, code: "ENODATA" } };
    return { ok: true, addresses: result };
  } catch (error) {
    return { ok: false, failure: { kind: "unresolvable", host, code: errorCode(error) } };
  }
}
