import { lookup } from "node:dns/promises";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { isIpLiteral, type PrivateUpstreamAllowance, privateUpstreamRefusal } from "@agentnet/gateway-rules";

/** How one attempt ended: the receiver's answer, nothing sent by rule, or no answer. */
export type AttemptOutcome =
  | { kind: "answered"; status: number }
  | { kind: "refused"; reason: string }
  | { kind: "failed"; reason: string };

export interface WebhookPost {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** Private addresses the operator allows webhooks to reach (AGN_ALLOWED_PRIVATE_WEBHOOKS). */
  allowance: PrivateUpstreamAllowance;
}

/** How much of a receiver's answer is read before the connection is closed: its status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");
const portOf = (url: URL) => Number(url.port) || (url.protocol === "https:" ? 443 : 80);

/**
 * Resolves the receiver's host once and refuses it unless every address may be reached (the
 * address rule of `packages/gateway-rules`, as for provider upstreams); the connection then goes
 * to the address checked, so a name that resolves elsewhere later (DNS rebinding) has no window.
 */
async function checkedAddress(
  url: URL,
  allowance: PrivateUpstreamAllowance,
): Promise<{ address: string; family: number } | { refused: string }> {
  const host = hostOf(url);
  const port = portOf(url);
  const addresses = isIpLiteral(host)
    ? [{ address: host, family: host.includes(":") ? 6 : 4 }]
    : await lookup(host, { all: true, verbatim: true });
  for (const { address } of addresses) {
    const cls = privateUpstreamRefusal({ host, port, address }, allowance);
    if (cls)
      return {
        refused: `${host} is the ${cls} address ${address}, which webhooks are not sent to (AGN_ALLOWED_PRIVATE_WEBHOOKS names the ones they are)`,
      };
  }
  const [first] = addresses;
  if (!first) return { refused: `${host} resolves to no address` };
  return first;
}

const pinnedLookup =
  (address: string, family: number): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all) {
      (callback as unknown as (error: null, all: { address: string; family: number }[]) => void)(null, [
        { address, family },
      ]);
      return;
    }
    callback(null, address, family);
  };

const errorText = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  const code = "code" in error && typeof error.code === "string" ? ` (${error.code})` : "";
  return `${error.message}${code}`;
};

/**
 * POSTs one webhook attempt, SSRF-safe: the host is resolved and checked before anything is sent,
 * TLS certificates are verified, redirects are not followed (a 3xx is the receiver's answer), and
 * the whole attempt, connection to last byte, has one deadline.
 */
export async function postWebhook(post: WebhookPost): Promise<AttemptOutcome> {
  const url = new URL(post.url);
  const signal = AbortSignal.timeout(post.timeoutMs);
  const timedOut = new Promise<"timeout">((resolve) =>
    signal.addEventListener("abort", () => resolve("timeout"), { once: true }),
  );
  let target: Awaited<ReturnType<typeof checkedAddress>> | "timeout";
  try {
    target = await Promise.race([checkedAddress(url, post.allowance), timedOut]);
  } catch (error) {
    return { kind: "failed", reason: `cannot resolve ${hostOf(url)}: ${errorText(error)}` };
  }
  if (target === "timeout") return { kind: "failed", reason: `no answer within ${post.timeoutMs} ms` };
  if ("refused" in target) return { kind: "refused", reason: target.refused };
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<AttemptOutcome>((resolve) => {
    const request = send(
      url,
      {
        method: "POST",
        headers: { ...post.headers, "content-length": String(Buffer.byteLength(post.body)) },
        lookup: pinnedLookup(target.address, target.family),
        agent: false,
        signal,
      },
      (response) => {
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        const answered = () => resolve({ kind: "answered", status: response.statusCode ?? 0 });
        response.on("end", answered);
        response.on("close", answered);
        response.on("error", answered);
      },
    );
    request.on("error", (error) => {
      resolve({
        kind: "failed",
        reason: signal.aborted ? `no answer within ${post.timeoutMs} ms` : errorText(error),
      });
    });
    request.end(post.body);
  });
}
