import type { IncomingMessage, ServerResponse } from "node:http";
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";

/** The access keys the fake Bedrock accepts (AWS's documented example keys), and its region. */
export const BEDROCK_KEYS = {
  access_key_id: "AKIAIOSFODNN7EXAMPLE",
  secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
};
export const BEDROCK_SESSION_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLE/session+token=";
export const BEDROCK_REGION = "eu-west-3";

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

/** `20261129T123600Z` → the Date it names. */
const amzDate = (value: string): Date | undefined => {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return m ? new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`) : undefined;
};

/**
 * Checks a SigV4 request the way AWS does, independently of the signer under test: the scope must
 * name the keys, the region and the service `bedrock`, and re-signing the request as received (its
 * raw path and query, the headers it says it signed, its x-amz-date) with @smithy/signature-v4 must
 * give the same signature. With a session token, x-amz-security-token must carry it.
 */
export async function sigV4Valid(
  req: IncomingMessage,
  body: string,
  sessionToken?: string,
): Promise<boolean> {
  const parts = AUTHORIZATION.exec(String(req.headers.authorization ?? ""));
  if (!parts) return false;
  const [, keyId, , region, service, signedList = "", signature] = parts;
  if (keyId !== BEDROCK_KEYS.access_key_id || region !== BEDROCK_REGION || service !== "bedrock")
    return false;
  if (sessionToken !== undefined && req.headers["x-amz-security-token"] !== sessionToken) return false;
  const signingDate = amzDate(String(req.headers["x-amz-date"] ?? ""));
  if (!signingDate) return false;
  const headers: Record<string, string> = {};
  for (const name of signedList.split(";")) {
    const value = req.headers[name];
    if (typeof value !== "string") return false;
    headers[name] = value;
  }
  const raw = req.url ?? "/";
  const queryAt = raw.indexOf("?");
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(queryAt < 0 ? "" : raw.slice(queryAt + 1))) {
    const seen = query[name];
    query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  const verifier = new SignatureV4({
    service: "bedrock",
    region: BEDROCK_REGION,
    sha256: Sha256,
    credentials: {
      accessKeyId: BEDROCK_KEYS.access_key_id,
      secretAccessKey: BEDROCK_KEYS.secret_access_key,
      ...(sessionToken === undefined ? {} : { sessionToken }),
    },
  });
  const resigned = await verifier.sign(
    {
      method: req.method ?? "GET",
      protocol: "https:",
      hostname: String(req.headers.host ?? "").replace(/:\d+$/, ""),
      path: queryAt < 0 ? raw : raw.slice(0, queryAt),
      query,
      headers,
      body,
    },
    { signingDate },
  );
  return resigned.headers.authorization?.endsWith(`Signature=${signature}`) === true;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

const FOUNDATION_MODELS = {
  modelSummaries: [
    {
      modelId: "anthropic.claude-sonnet-4-20250514-v1:0",
      modelName: "Claude Sonnet 4",
      providerName: "Anthropic",
      inferenceTypesSupported: ["ON_DEMAND", "INFERENCE_PROFILE"],
    },
    {
      modelId: "anthropic.claude-sonnet-4-5-20250929-v1:0",
      modelName: "Claude Sonnet 4.5",
      providerName: "Anthropic",
      inferenceTypesSupported: ["INFERENCE_PROFILE"],
    },
    { modelId: "amazon.nova-pro-v1:0", modelName: "Nova Pro", inferenceTypesSupported: ["ON_DEMAND"] },
  ],
};

const PROFILE_PAGES: Record<string, unknown> = {
  "": {
    inferenceProfileSummaries: [
      {
        inferenceProfileId: "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        inferenceProfileName: "Global Claude Sonnet 4.5",
        type: "SYSTEM_DEFINED",
      },
    ],
    nextToken: "page+2",
  },
  "page+2": {
    inferenceProfileSummaries: [
      {
        inferenceProfileId: "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
        inferenceProfileName: "EU Claude Sonnet 4.5",
        type: "SYSTEM_DEFINED",
      },
    ],
  },
};

/**
 * Bedrock's control plane for one test region: `GET /foundation-models` and paged `GET
 * /inference-profiles`, to a Bedrock API key (`Authorization: Bearer`) or to requests signed with
 * `BEDROCK_KEYS` (with or without `BEDROCK_SESSION_TOKEN`). Anything else is AWS's 403.
 */
export function bedrockScenario(apiKey: string) {
  return (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const authorized = async () =>
      req.headers.authorization === `Bearer ${apiKey}` ||
      sigV4Valid(
        req,
        "",
        req.headers["x-amz-security-token"] === undefined ? undefined : BEDROCK_SESSION_TOKEN,
      );
    void authorized().then((ok) => {
      if (!ok) return json(res, 403, { message: "The request signature we calculated does not match." });
      if (url.pathname === "/foundation-models") return json(res, 200, FOUNDATION_MODELS);
      if (url.pathname === "/inference-profiles" && url.searchParams.get("maxResults") === "1000") {
        return json(res, 200, PROFILE_PAGES[url.searchParams.get("nextToken") ?? ""] ?? {});
      }
      json(res, 404, { message: "not found" });
    });
  };
}
