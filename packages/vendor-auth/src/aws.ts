import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import type { AwsAccessKey } from "./keys";

/** A request as the proxy (or the verifier) sends it: the URL's path and query exactly as on the wire. */
export interface SignableRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** Headers to add to the request (authorization, x-amz-date, x-amz-content-sha256, x-amz-security-token). */
export type RequestSigner = (request: SignableRequest) => Promise<Record<string, string>>;

/** Bedrock's runtime and control plane both sign as the service `bedrock`. */
export const BEDROCK_SIGNING_SERVICE = "bedrock";

/**
 * The AWS hosts of Bedrock, which name their region: `bedrock-runtime.{region}.amazonaws.com`,
 * the FIPS variants (`bedrock-runtime-fips.…`), the control plane (`bedrock.{region}…`), China's
 * `.amazonaws.com.cn`, and interface VPC endpoints (`vpce-….bedrock-runtime.{region}.vpce.amazonaws.com`).
 */
const BEDROCK_HOST =
  /^(?:vpce-[a-z0-9-]+\.)?bedrock(?:-runtime)?(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d{1,2})\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$/;

/** The region a Bedrock host names, or undefined for any other host. */
export function regionOfBedrockHost(hostname: string): string | undefined {
  return BEDROCK_HOST.exec(hostname.toLowerCase().replace(/\.$/, ""))?.[1];
}

/**
 * The region a request to `url` is signed for: the one its AWS host names, else the key's
 * `region` (a private endpoint or a local test vendor), else none: a string saying what to do.
 * The host wins over the key: a key used against another region's endpoint would only be refused.
 */
export function signingRegion(
  url: URL,
  key: Pick<AwsAccessKey, "region">,
): { region: string } | { problem: string } {
  const region = regionOfBedrockHost(url.hostname) ?? key.region;
  if (region !== undefined) return { region };
  return {
    problem: `the upstream host ${url.hostname} names no AWS region to sign for: use https://bedrock-runtime.<region>.amazonaws.com, or add "region" to the access keys`,
  };
}

/** What is signed besides the x-amz-* headers the signer adds: the proxy's other headers stay unsigned. */
const SIGNED_HEADERS = new Set(["host", "content-type"]);
const ADDED_HEADERS = ["authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"];

export class AwsSigningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AwsSigningError";
  }
}

/**
 * Signs requests with AWS access keys (Signature Version 4, service `bedrock`), as the AWS SDK's
 * Bedrock clients do: the path is signed as sent, each segment URI-encoded once more
 * (`uriEscapePath`, the default for every service but S3), so a model id sent as
 * `anthropic.claude-…-v1%3A0` is signed as `…-v1%253A0`, which is what Bedrock computes from the
 * path it receives. Only `host`, `content-type` and the `x-amz-*` headers are signed: the caller's
 * other headers may change on the way (a proxy's) without breaking the signature. The body is
 * hashed into `x-amz-content-sha256`. Rejects with `AwsSigningError` when no region can be told.
 */
export function awsRequestSigner(key: AwsAccessKey, now: () => Date = () => new Date()): RequestSigner {
  const signer = new SignatureV4({
    service: BEDROCK_SIGNING_SERVICE,
    // Only a default: every request is signed for its own region (`signingRegion`).
    region: key.region ?? "us-east-1",
    sha256: Sha256,
    credentials: {
      accessKeyId: key.access_key_id,
      secretAccessKey: key.secret_access_key,
      ...(key.session_token ? { sessionToken: key.session_token } : {}),
    },
  });
  return async ({ method, url, headers, body }) => {
    const target = signingRegion(url, key);
    if ("problem" in target) throw new AwsSigningError(target.problem);
    const signed: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (SIGNED_HEADERS.has(name.toLowerCase())) signed[name.toLowerCase()] = value;
    }
    // The Host header the request goes out with: the URL's host (its port only when not the default).
    signed.host ??= url.host;
    const query: Record<string, string | string[]> = {};
    for (const name of new Set(url.searchParams.keys())) {
      const values = url.searchParams.getAll(name);
      query[name] = values.length === 1 ? (values[0] ?? "") : values;
    }
    const request = await signer.sign(
      {
        method: method.toUpperCase(),
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port === "" ? {} : { port: Number(url.port) }),
        path: url.pathname,
        query,
        headers: signed,
        body,
      },
      { signingDate: now(), signingRegion: target.region },
    );
    const added: Record<string, string> = {};
    for (const name of ADDED_HEADERS) {
      const value = request.headers[name];
      if (value !== undefined) added[name] = value;
    }
    return added;
  };
}
