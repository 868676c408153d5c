import type { NatsConnection, Subscription } from "@agentnet/bus";
import { Verifier } from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { CheckContext } from "./checks/context";
import { type ResolveFn, systemResolve } from "./dial/resolve";
import { checkAllowance } from "./domain/allowance";
import { registerVerifierHandlers } from "./handlers/verifier";

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024;
export const DEFAULT_MAX_PAGES = 20;

export interface VerifierOptions {
  /** One deadline for a whole check: resolving, connecting, every page. */
  timeoutMs?: number;
  maxBodyBytes?: number;
  /** Pages of a paginated listing discovery reads at most. */
  maxPages?: number;
  /** Extra trusted CA certificates (PEM), on top of Node's bundled roots. */
  extraCa?: string[];
  /**
   * Tests only: exact hostnames that may resolve to non-public addresses (local vendor
   * servers). Wildcards and IP literals are refused.
   */
  allowPrivateHosts?: string[];
  /**
   * Tests only: origins (`http://127.0.0.1:4000`) of token endpoints a key may name besides the
   * vendors' own (a service-account key's token_uri, an Entra ID authority_host).
   */
  tokenEndpoints?: string[];
  /** Tests only: replaces the OS resolver, e.g. to point vendor names at 127.0.0.1. */
  resolve?: ResolveFn;
  /**
   * Tests only: serve `<prefix>.agn.verify.*` instead, so verifiers with different test
   * resolvers in parallel test files never answer each other's requests.
   */
  subjectPrefix?: string;
}

/** The verifier's endpoints, optionally under a test prefix (see `subjectPrefix`). */
export const verifierEndpoints = (subjectPrefix?: string): typeof Verifier =>
  subjectPrefix === undefined
    ? Verifier
    : {
        verifyProvider: {
          ...Verifier.verifyProvider,
          subject: `${subjectPrefix}.${Verifier.verifyProvider.subject}`,
        },
        discover: { ...Verifier.discover, subject: `${subjectPrefix}.${Verifier.discover.subject}` },
        verifyMcpServer: {
          ...Verifier.verifyMcpServer,
          subject: `${subjectPrefix}.${Verifier.verifyMcpServer.subject}`,
        },
      };

/** Wires the verifier's endpoints onto a bus connection; `stop()` unsubscribes them. */
export async function startVerifier(deps: { nc: NatsConnection; logger: Logger; options?: VerifierOptions }) {
  const options = deps.options ?? {};
  const ctx: CheckContext = {
    resolve: options.resolve ?? systemResolve,
    allowPrivateHosts: checkAllowance(options.allowPrivateHosts ?? []),
    dial: {
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      ...(options.extraCa ? { extraCa: options.extraCa } : {}),
    },
    maxPages: options.maxPages ?? DEFAULT_MAX_PAGES,
    vendorCredentials: {
      mintTimeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      retryAfterFailureMs: 0,
      isTokenEndpointAllowed: (url) => (options.tokenEndpoints ?? []).includes(url.origin),
      ...(options.extraCa ? { trustedCa: options.extraCa.join("\n") } : {}),
    },
    logger: deps.logger,
  };
  if (ctx.allowPrivateHosts.size > 0) {
    deps.logger.warn({ hosts: [...ctx.allowPrivateHosts] }, "private-address allowance on: for tests only");
  }
  const subscriptions: Subscription[] = registerVerifierHandlers(
    deps.nc,
    ctx,
    verifierEndpoints(options.subjectPrefix),
  );
  // A flush makes sure the server has every subscription before anyone sends a request.
  await deps.nc.flush();
  return {
    stop: () => {
      for (const sub of subscriptions) sub.unsubscribe();
    },
  };
}
