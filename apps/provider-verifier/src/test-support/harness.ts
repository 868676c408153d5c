import type { NatsConnection } from "@agentnet/bus";
import { AppError, type Verifier } from "@agentnet/contracts";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus, uniqueId } from "@agentnet/testkit";
import { expect } from "vitest";
import { startVerifier, type VerifierOptions, verifierEndpoints } from "../app";
import type { ResolveFn } from "../dial/resolve";
import { makeTestPki } from "./tls";
import { closedPort, GOOD_KEY, startVendors, VENDOR_HOSTS, type VendorServer } from "./vendors";

/** Names pointed at 127.0.0.1 but deliberately left out of the private-host allowance. */
export const PRIVATE_HOST = "private.vendor.test";
/** Resolves to one public and one private address. */
export const MIXED_HOST = "mixed.vendor.test";
export const UNTRUSTED_HOST = "untrusted.vendor.test";
export const REFUSED_HOST = "refused.vendor.test";
export const SKIP_HOST = "skip.vendor.test";
/** Served by the trusted server, whose certificate does not name it. */
export const WRONG_NAME_HOST = "ok.elsewhere.test";
export const CLOUDFLARE_LISTING_HOST = "api.cloudflare.com";

const notFound = (host: string) =>
  Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });

export interface Harness {
  nc: NatsConnection;
  endpoints: typeof Verifier;
  vendors: VendorServer;
  /** Every name the verifier asked the (test) resolver about, in order. */
  resolvedNames: string[];
  /** An upstream_url for a vendor host on the right local port. */
  upstream: (host: string, path?: string) => string;
  stop: () => Promise<void>;
}

/**
 * A verifier in process on a test-unique subject prefix, a trusted local vendor server, an
 * untrusted one, and a resolver that knows only the test names (everything else: ENOTFOUND).
 */
export async function startHarness(
  options: Omit<VerifierOptions, "resolve" | "subjectPrefix" | "extraCa"> & {
    cloudflareResolves?: boolean;
  } = {},
): Promise<Harness> {
  const pki = makeTestPki(["*.vendor.test", "vendor.test"]);
  const strangerPki = makeTestPki([UNTRUSTED_HOST]);
  const vendors = await startVendors(pki);
  const untrusted = await startVendors(strangerPki);
  const refusedPort = await closedPort();

  const local = new Set([
    ...VENDOR_HOSTS,
    PRIVATE_HOST,
    UNTRUSTED_HOST,
    REFUSED_HOST,
    SKIP_HOST,
    WRONG_NAME_HOST,
  ]);
  const resolvedNames: string[] = [];
  const resolve: ResolveFn = async (host) => {
    resolvedNames.push(host);
    if (local.has(host)) return [{ address: "127.0.0.1", family: 4 }];
    if (host === MIXED_HOST) {
      return [
        { address: "93.184.216.34", family: 4 },
        { address: "10.0.0.1", family: 4 },
      ];
    }
    if (host === CLOUDFLARE_LISTING_HOST && options.cloudflareResolves !== false) {
      return [{ address: "104.16.132.229", family: 4 }];
    }
    throw notFound(host);
  };

  const { cloudflareResolves: _ignored, ...verifierOptions } = options;
  const prefix = uniqueId("verifier");
  const nc = await connectTestBus("provider-verifier-test");
  const verifier = await startVerifier({
    nc,
    logger: createLogger("provider-verifier", "silent"),
    options: {
      allowPrivateHosts: [...local].filter((host) => host !== PRIVATE_HOST),
      ...verifierOptions,
      resolve,
      extraCa: [pki.caPem],
      subjectPrefix: prefix,
    },
  });

  const portOf = (host: string) =>
    host === UNTRUSTED_HOST ? untrusted.port : host === REFUSED_HOST ? refusedPort : vendors.port;
  return {
    nc,
    endpoints: verifierEndpoints(prefix),
    vendors,
    resolvedNames,
    upstream: (host, path = "/v1") => `https://${host}:${portOf(host)}${path}`,
    stop: async () => {
      verifier.stop();
      await nc.drain();
      await Promise.all([vendors.close(), untrusted.close()]);
    },
  };
}
export { GOOD_KEY } from "./vendors";

/**
 * Expects a check to be refused with a 422 of `code` whose message says `about` and never carries
 * the credential (vendors and servers echo keys back; the verifier must not pass them on).
 */
export async function expectRefusal(reply: Promise<unknown>, code: string, about: RegExp): Promise<void> {
  const error = await reply.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  if (!(error instanceof AppError)) return;
  expect({ status: error.status, code: error.code }).toEqual({ status: 422, code });
  expect(error.message).toMatch(about);
  expect(error.message).not.toContain(GOOD_KEY);
  expect(error.message).not.toContain("SECRET");
}
