import { type NatsConnection, request } from "@agentnet/bus";
import {
  AgentTokens,
  AppError,
  ControlPlane,
  DeviceApprovalBody,
  DeviceAuthorization,
  DeviceCodeBody,
  DevicePreviewQuery,
  DeviceTokenBody,
  type Endpoint,
  RefreshBody,
} from "@agentnet/contracts";
import { type ErrorRequestHandler, type Request, type RequestHandler, Router } from "express";
import { toAppError } from "../http/errors";
import type { DescribedOperation } from "../http/openapi";
import { requestOriginOf, siteOf } from "../http/origin";
import { mount, param, type RouteSpec } from "../http/route";

/** The device flow's token-less routes, for the OpenAPI document; they refuse in OAuth's shape. */
export const AGENT_AUTH_OPERATIONS: DescribedOperation[] = [
  {
    method: "post",
    path: "/auth/device/code",
    operationId: "agent_credentials.device_code",
    summary: "Ask for a device code to sign an agent in (RFC 8628; agentnet login) (beyond the spec)",
    credential: "none",
    body: DeviceCodeBody,
    reply: DeviceAuthorization,
    oauthErrors: true,
  },
  {
    method: "post",
    path: "/auth/device/token",
    operationId: "agent_credentials.device_token",
    summary: "Poll for the tokens of a device code once the member approved it (beyond the spec)",
    credential: "none",
    body: DeviceTokenBody,
    reply: AgentTokens,
    oauthErrors: true,
  },
  {
    method: "post",
    path: "/auth/token",
    operationId: "agent_credentials.refresh",
    summary:
      "Trade a refresh token for a new proxy token and refresh token (agentnet token) (beyond the spec)",
    credential: "none",
    body: RefreshBody,
    reply: AgentTokens,
    oauthErrors: true,
  },
];

/**
 * The public half of agent credentials (docs/API.md "Agent credentials"): an agent asks for a
 * device code, polls for its tokens, and refreshes them, with no API token (it has none yet). Their
 * refusals carry OAuth's `error` and `error_description` (RFC 8628 §3.5) beside the API's own
 * `message` and `code`, so OAuth device-flow clients read them too.
 */
export function agentCredentialAuthRoutes(
  nc: NatsConnection,
  timeoutMs: number,
  parseJson: RequestHandler,
  rateLimited: RequestHandler,
): Router {
  const router = Router();
  // The body is read on these routes alone: any other request reads none before it is authenticated.
  const forward = <E extends Endpoint>(
    endpoint: E,
    toRequest: (req: Request) => unknown,
    limited: RequestHandler = rateLimited,
  ): RequestHandler[] => [
    limited,
    parseJson,
    async (req, res, next) => {
      try {
        res.json(await request(nc, endpoint, toRequest(req) as never, { timeoutMs }));
      } catch (error) {
        next(error);
      }
    },
  ];
  router.post(
    "/auth/device/code",
    ...forward(ControlPlane.deviceCodeStart, (req) => ({
      body: DeviceCodeBody.parse(req.body ?? {}),
      // Where the member confirms it: the dashboard's page, at the address the agent reached the API by.
      verification_uri: `${siteOf(req)}/#/device`,
      origin: requestOriginOf(req),
    })),
  );
  // A device-flow client keeps polling, slower, on `slow_down` (RFC 8628 §3.5) and gives up on an
  // error it does not know: past the bound a poll is told to slow down.
  const pollLimited: RequestHandler = (req, res, next) =>
    rateLimited(req, res, (error?: unknown) =>
      next(
        error instanceof AppError && error.status === 429
          ? new AppError(400, "slow_down", error.message)
          : error,
      ),
    );
  router.post(
    "/auth/device/token",
    ...forward(ControlPlane.deviceCodePoll, (req) => DeviceTokenBody.parse(req.body ?? {}), pollLimited),
  );
  router.post(
    "/auth/token",
    ...forward(ControlPlane.agentTokenRefresh, (req) => RefreshBody.parse(req.body ?? {})),
  );
  const oauthErrors: ErrorRequestHandler = (error, _req, res, next) => {
    const refusal = toAppError(error);
    if (!refusal || refusal.status >= 500) {
      next(error);
      return;
    }
    res.status(refusal.status).json({
      error:
        refusal.status === 401
          ? "invalid_grant"
          : refusal.code === "bad_request"
            ? "invalid_request"
            : refusal.code,
      error_description: refusal.message,
      message: refusal.message,
      code: refusal.status,
      reason: refusal.code,
    });
  };
  router.use(oauthErrors);
  return router;
}

/** A member's own agent credentials: approving a device code, listing and revoking what they hold. */
export function agentCredentialRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  const add = <E extends Endpoint>(spec: RouteSpec<E>) => mount(router, nc, timeoutMs, spec);
  add({
    method: "get",
    path: "/agent-credentials/device",
    summary:
      "Who asked for a pending device code (client, address, agent, when), before you approve it (beyond the spec)",
    access: "member",
    endpoint: ControlPlane.deviceCodePreview,
    toRequest: (req, caller) => ({ caller, query: DevicePreviewQuery.parse(req.query) }),
  });
  add({
    method: "post",
    path: "/agent-credentials/device",
    summary: "Approve (or refuse) the device code an agent shows, for yourself (beyond the spec)",
    access: "member",
    endpoint: ControlPlane.deviceCodeApprove,
    toRequest: (req, caller) => ({ caller, body: DeviceApprovalBody.parse(req.body ?? {}) }),
  });
  add({
    method: "get",
    path: "/agent-credentials",
    summary: "List your agent credentials (beyond the spec)",
    access: "member",
    endpoint: ControlPlane.agentCredentialsList,
    toRequest: (_req, caller) => ({ caller }),
  });
  add({
    method: "delete",
    path: "/agent-credentials/:credentialId",
    summary: "Revoke one of your agent credentials and the tokens it minted (beyond the spec)",
    access: "member",
    endpoint: ControlPlane.agentCredentialsDelete,
    toRequest: (req, caller) => ({ caller, credential_id: param(req, "credentialId") }),
  });
  return router;
}
