import { startTestApi } from "@agentnet/api-gateway/testing";
import { request } from "@agentnet/bus";
import {
  ControlPlane,
  type PersonalAccessTokenGenerated,
  type User,
  type Verifier,
} from "@agentnet/contracts";
import { startControlPlane } from "@agentnet/control-plane/app";
import { startIdentityRecheck } from "@agentnet/control-plane/identity-recheck";
import { parseSealingKeys } from "@agentnet/sealing";
import { createLogger } from "@agentnet/service-kit";
import { connectTestBus, connectTestMongo, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * The control-plane and the api-gateway in this process, over the real NATS and MongoDB-wire
 * backends, with the gateway on a free port. Tests speak plain HTTP to it.
 */
export async function startApiHarness(
  options: {
    verifier?: typeof Verifier;
    bodyLimitBytes?: number;
    authRateLimitPerMinute?: number;
    trustProxy?: boolean;
    /** Asks the identity providers again this often (the control-plane's AGN_IDP_RECHECK_SECONDS); never unless set. */
    identityRecheckMs?: number;
  } = {},
) {
  const logger = createLogger("test", "silent");
  const nc = await connectTestBus("api-harness");
  const connection = await connectTestMongo();
  const controlPlane = await startControlPlane({
    nc,
    connection,
    logger,
    sealingKey: parseSealingKeys(TEST_SEALING_KEY),
    verifyTimeoutMs: 5_000,
    ...(options.verifier ? { verifier: options.verifier } : {}),
  });
  const api = await startTestApi({
    nc,
    logger,
    bodyLimitBytes: options.bodyLimitBytes ?? 65_536,
    requestTimeoutMs: 5_000,
    ...(options.authRateLimitPerMinute === undefined
      ? {}
      : { authRateLimitPerMinute: options.authRateLimitPerMinute }),
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
  });
  const baseUrl = api.url;
  const recheck =
    options.identityRecheckMs === undefined
      ? undefined
      : startIdentityRecheck(controlPlane, { everyMs: options.identityRecheckMs });

  const call = async <T = unknown>(
    method: string,
    path: string,
    options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    if (options.token) headers.authorization = `Token ${options.token}`;
    if (options.body !== undefined) headers["content-type"] ??= "application/json";
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      ...(options.body !== undefined
        ? { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) }
        : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: (text ? JSON.parse(text) : undefined) as T,
      headers: response.headers,
    };
  };

  /** A member the owner adds with `role`, and an API token the owner makes for them (30 days). */
  const addMember = async (ownerToken: string, role: "admin" | "auditor" | "user" = "user") => {
    const created = await call<User>("POST", "/api/users", {
      token: ownerToken,
      body: { email: `${uniqueId(role)}@example.com`, role },
    });
    if (created.status !== 200) throw new Error(`adding a member answered ${created.status}`);
    const token = await call<PersonalAccessTokenGenerated>("POST", `/api/users/${created.body.id}/tokens`, {
      token: ownerToken,
      body: { name: "t", expires_in: 30 },
    });
    if (token.status !== 200) throw new Error(`making the member's token answered ${token.status}`);
    return {
      user: created.body,
      token: token.body.plain_token,
      tokenId: token.body.personal_access_token.id,
    };
  };

  /** A fresh account with its owner; every test gets its own, so tests never see each other's data. */
  const bootstrap = (email = `${uniqueId("owner")}@example.com`) =>
    request(nc, ControlPlane.accountsBootstrap, { email });

  const stop = async () => {
    await recheck?.stop();
    await api.stop();
    await nc.drain();
    await connection.close();
  };
  return { baseUrl, call, bootstrap, addMember, nc, connection, stop };
}

export type ApiHarness = Awaited<ReturnType<typeof startApiHarness>>;
