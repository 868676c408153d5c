import { generateKeyPairSync, type KeyObject, randomBytes, verify } from "node:crypto";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { TEST_CA_PEM, TEST_SERVER_CERT_PEM, TEST_SERVER_KEY_PEM } from "./test-tls";

/**
 * Local stand-ins for the OAuth token endpoints vendors' keys are exchanged at, so tests mint real
 * tokens over real HTTP: Google's (a service-account key's JWT bearer grant, RFC 7523, the
 * assertion's RS256 signature checked against the key the test generated) and Microsoft Entra ID's
 * (client credentials, on https with the test CA since MSAL refuses plain-http authorities).
 * A mock vendor asks `accepts(token)` to take only tokens minted here and not yet expired.
 */

export const GOOGLE_CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
export const AZURE_COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default";
/** The audience google-auth-library signs for whatever the key's token_uri says. */
const GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token";

export interface TokenServerOptions {
  /** expires_in of each token, seconds (fractions allowed: a token that expires during a test). */
  lifetimeSeconds?: number;
  /** Wait this long before answering a token request (to make concurrent mints overlap). */
  delayMs?: number;
}

interface Issued {
  subject: string;
  expiresAt: number;
}

/** What both servers share: tokens issued, their expiry, failures on demand. */
abstract class TokenServerBase {
  lifetimeSeconds: number;
  delayMs: number;
  /** Every token request answered with a token, in order, by the subject (client email or client id). */
  readonly mints: string[] = [];
  /** Token requests refused (bad signature, unknown client, injected failures). */
  readonly refusals: string[] = [];
  private readonly issued = new Map<string, Issued>();
  private failures: { count: number; status: number }[] = [];

  constructor(
    protected readonly server: Server,
    options: TokenServerOptions,
  ) {
    this.lifetimeSeconds = options.lifetimeSeconds ?? 3600;
    this.delayMs = options.delayMs ?? 0;
  }

  protected get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Whether `token` was minted here and has not expired: what a mock vendor takes. */
  accepts(token: string | undefined): boolean {
    if (!token) return false;
    const issued = this.issued.get(token.replace(/^Bearer\s+/i, ""));
    return issued !== undefined && issued.expiresAt > Date.now();
  }

  /** The subject a (still valid) token was minted for. */
  subjectOf(token: string | undefined): string | undefined {
    if (!token || !this.accepts(token)) return undefined;
    return this.issued.get(token.replace(/^Bearer\s+/i, ""))?.subject;
  }

  /** Answer the next `count` token requests with `status` (400 by default: clients do not retry it). */
  failNext(count: number, status = 400): void {
    this.failures.push({ count, status });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  /**
   * Answers the next injected failure, if one is due, with the vendor's error code for a server
   * failure (5xx) or a refused client; whether it answered.
   */
  protected refusedByInjection(res: ServerResponse, codes: { server: string; client: string }): boolean {
    const next = this.failures[0];
    if (!next) return false;
    next.count -= 1;
    if (next.count <= 0) this.failures.shift();
    this.refuse(
      res,
      next.status,
      next.status >= 500 ? codes.server : codes.client,
      "failure injected by the test",
    );
    return true;
  }

  protected issue(subject: string, prefix: string): { access_token: string; expires_in: number } {
    const token = `${prefix}${randomBytes(24).toString("base64url")}`;
    this.issued.set(token, { subject, expiresAt: Date.now() + this.lifetimeSeconds * 1000 });
    this.mints.push(subject);
    return { access_token: token, expires_in: this.lifetimeSeconds };
  }

  protected refuse(res: ServerResponse, status: number, error: string, description: string): void {
    this.refusals.push(`${error}: ${description}`);
    sendJson(res, status, { error, error_description: description });
  }

  /** The server's request listener. */
  async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const body = await readBody(req);
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      await this.handle(req, res, body);
    } catch (error) {
      if (!res.headersSent) sendJson(res, 500, { error: "server_error", error_description: String(error) });
    }
  }

  protected abstract handle(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> | void;
}

/** A service-account key file as Google issues it (the fields agentnet reads, and the usual others). */
export interface GoogleServiceAccountKey {
  type: "service_account";
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

export interface GoogleServiceAccount {
  key: GoogleServiceAccountKey;
  /** The key as the JSON text a user pastes (a provider's api_key). */
  json: string;
  email: string;
}

export class GoogleTokenServer extends TokenServerBase {
  private readonly accounts = new Map<string, KeyObject>();

  /** The token endpoint: every service-account key made here names it as token_uri. */
  get tokenUri(): string {
    return `http://127.0.0.1:${this.port}/token`;
  }

  /** A new service account with its own RSA key, registered here; its key file as JSON. */
  serviceAccount(options: { email?: string; projectId?: string } = {}): GoogleServiceAccount {
    const projectId = options.projectId ?? "agentnet-test";
    const email =
      options.email ?? `sa-${randomBytes(4).toString("hex")}@${projectId}.iam.gserviceaccount.com`;
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    this.accounts.set(email, publicKey);
    const key: GoogleServiceAccountKey = {
      type: "service_account",
      project_id: projectId,
      private_key_id: randomBytes(20).toString("hex"),
      private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      client_email: email,
      client_id: String(Math.floor(Math.random() * 1e18)),
      auth_uri: "https://accounts.google.com/o/oauth2/auth",
      token_uri: this.tokenUri,
      auth_provider_x509_cert_url: "https://www.googleapis.com/oauth2/v1/certs",
      client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
      universe_domain: "googleapis.com",
    };
    return { key, json: JSON.stringify(key, null, 2), email };
  }

  /** Forget a service account (its key deleted in the console): its grants then fail with invalid_grant. */
  revoke(email: string): void {
    this.accounts.delete(email);
  }

  protected handle(req: IncomingMessage, res: ServerResponse, body: string): void {
    if (req.method !== "POST" || req.url?.split("?")[0] !== "/token") {
      sendJson(res, 404, { error: "not_found" });
      return;
    }
    const form = new URLSearchParams(body);
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      this.refuse(res, 400, "unsupported_grant_type", `grant_type ${form.get("grant_type")}`);
      return;
    }
    const claims = this.verifiedAssertion(form.get("assertion") ?? "");
    if (typeof claims === "string") {
      this.refuse(res, 400, "invalid_grant", claims);
      return;
    }
    if (this.refusedByInjection(res, { server: "internal_failure", client: "invalid_grant" })) return;
    sendJson(res, 200, { ...this.issue(claims.iss, "ya29.test-"), token_type: "Bearer" });
  }

  /** The assertion's claims when its signature is the registered key's and its claims hold; else why not. */
  private verifiedAssertion(assertion: string): { iss: string } | string {
    const [head, payload, signature] = assertion.split(".");
    if (!head || !payload || !signature) return "assertion is not a JWS";
    const header = parseJson(Buffer.from(head, "base64url").toString());
    if (header?.alg !== "RS256") return `alg ${String(header?.alg)} is not RS256`;
    const claims = parseJson(Buffer.from(payload, "base64url").toString());
    const iss = typeof claims?.iss === "string" ? claims.iss : "";
    const publicKey = this.accounts.get(iss);
    if (!publicKey) return `no service account ${iss}`;
    const signed = verify(
      "RSA-SHA256",
      Buffer.from(`${head}.${payload}`),
      publicKey,
      Buffer.from(signature, "base64url"),
    );
    if (!signed) return "Invalid JWT Signature.";
    if (claims?.aud !== this.tokenUri && claims?.aud !== GOOGLE_TOKEN_AUDIENCE)
      return `aud ${String(claims?.aud)}`;
    const scopes = typeof claims?.scope === "string" ? claims.scope.split(" ") : [];
    if (!scopes.includes(GOOGLE_CLOUD_PLATFORM_SCOPE)) return `scope ${String(claims?.scope)}`;
    const now = Date.now() / 1000;
    if (typeof claims?.exp !== "number" || claims.exp < now)
      return "Invalid JWT: Token must be a short-lived token";
    if (typeof claims.iat !== "number" || claims.iat > now + 300) return "Invalid JWT: iat in the future";
    return { iss };
  }
}

/** A fake Google OAuth 2.0 token endpoint on 127.0.0.1 (plain http). */
export async function startGoogleTokenServer(options: TokenServerOptions = {}): Promise<GoogleTokenServer> {
  let target: GoogleTokenServer | undefined;
  const server = createHttpServer((req, res) => void target?.answer(req, res));
  target = new GoogleTokenServer(server, options);
  await listen(server);
  return target;
}

/** Microsoft Entra ID client credentials, in the JSON shape agentnet takes as a provider key. */
export interface EntraClient {
  tenant_id: string;
  client_id: string;
  client_secret: string;
  /** This server's authority host: set it, or the client goes to login.microsoftonline.com. */
  authority_host: string;
}

export class EntraTokenServer extends TokenServerBase {
  /** The PEM of the CA that signed this server's certificate: trust it, or TLS fails. */
  readonly ca = TEST_CA_PEM;
  private readonly clients = new Map<string, { tenant: string; secret: string }>();

  /** https://127.0.0.1:<port>, an Entra authority host (MSAL takes only https authorities). */
  get authorityHost(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** A new app registration with a client secret, registered here. */
  client(options: { tenantId?: string } = {}): { credentials: EntraClient; json: string } {
    const credentials: EntraClient = {
      tenant_id: options.tenantId ?? crypto.randomUUID(),
      client_id: crypto.randomUUID(),
      client_secret: `test~${randomBytes(18).toString("base64url")}`,
      authority_host: this.authorityHost,
    };
    this.clients.set(credentials.client_id, {
      tenant: credentials.tenant_id,
      secret: credentials.client_secret,
    });
    return { credentials, json: JSON.stringify(credentials) };
  }

  /** Delete an app registration's secret: its grants then fail with invalid_client. */
  revoke(clientId: string): void {
    this.clients.delete(clientId);
  }

  protected handle(req: IncomingMessage, res: ServerResponse, body: string): void {
    const path = req.url?.split("?")[0] ?? "";
    const base = this.authorityHost;
    const discovery = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(path);
    if (req.method === "GET" && discovery) {
      const tenant = discovery[1];
      sendJson(res, 200, {
        token_endpoint: `${base}/${tenant}/oauth2/v2.0/token`,
        authorization_endpoint: `${base}/${tenant}/oauth2/v2.0/authorize`,
        end_session_endpoint: `${base}/${tenant}/oauth2/v2.0/logout`,
        device_authorization_endpoint: `${base}/${tenant}/oauth2/v2.0/devicecode`,
        jwks_uri: `${base}/${tenant}/discovery/v2.0/keys`,
        issuer: `${base}/${tenant}/v2.0`,
        response_types_supported: ["code", "id_token", "code id_token", "id_token token"],
        token_endpoint_auth_methods_supported: [
          "client_secret_post",
          "private_key_jwt",
          "client_secret_basic",
        ],
      });
      return;
    }
    const token = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
    if (req.method !== "POST" || !token) {
      sendJson(res, 404, { error: "not_found", error_description: `${req.method} ${path}` });
      return;
    }
    const form = new URLSearchParams(body);
    const clientId = form.get("client_id") ?? "";
    const client = this.clients.get(clientId);
    if (form.get("grant_type") !== "client_credentials") {
      this.refuse(res, 400, "unsupported_grant_type", `grant_type ${form.get("grant_type")}`);
      return;
    }
    if (!client || client.tenant !== token[1]) {
      this.refuse(
        res,
        400,
        "unauthorized_client",
        `AADSTS700016: application ${clientId} not found in ${token[1]}`,
      );
      return;
    }
    if (form.get("client_secret") !== client.secret) {
      this.refuse(res, 401, "invalid_client", "AADSTS7000215: Invalid client secret provided.");
      return;
    }
    if (form.get("scope") !== AZURE_COGNITIVE_SERVICES_SCOPE) {
      this.refuse(res, 400, "invalid_scope", `AADSTS70011: scope ${form.get("scope")}`);
      return;
    }
    if (this.refusedByInjection(res, { server: "temporarily_unavailable", client: "invalid_client" })) return;
    const issued = this.issue(clientId, "eyJ0eXAi.test-");
    sendJson(res, 200, { token_type: "Bearer", ext_expires_in: issued.expires_in, ...issued });
  }
}

/** A fake Microsoft Entra ID authority on https://127.0.0.1 (certificate signed by `ca`). */
export async function startEntraTokenServer(options: TokenServerOptions = {}): Promise<EntraTokenServer> {
  let target: EntraTokenServer | undefined;
  const server = createHttpsServer({ cert: TEST_SERVER_CERT_PEM, key: TEST_SERVER_KEY_PEM }, (req, res) => {
    void target?.answer(req, res);
  });
  target = new EntraTokenServer(server, options);
  await listen(server);
  return target;
}

/** The bearer token of a request a mock vendor received. */
export function bearerTokenOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.toLowerCase().startsWith("bearer ") ? header.slice(7) : undefined;
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString()));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
