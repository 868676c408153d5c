import { type NatsConnection, request } from "@agentnet/bus";
import {
  ControlPlane,
  Empty,
  type Endpoint,
  IdentityProviderBody,
  SessionInfo,
  SignInStartQuery,
  unauthenticated,
} from "@agentnet/contracts";
import { type ErrorRequestHandler, type RequestHandler, type Response, Router } from "express";
import { callerOf, sessionOf } from "../http/auth";
import { toAppError } from "../http/errors";
import type { DescribedOperation } from "../http/openapi";
import { requestOriginOf, siteOf } from "../http/origin";
import { mount, type RouteSpec } from "../http/route";
import {
  clearCookie,
  cookiesOf,
  csrfTokenOf,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  sameSecret,
  setCookie,
} from "../http/session-cookie";

const CALLBACK_PATH = "/api/auth/oidc/callback";
/** A sign-in at the provider takes at most this long (the control-plane's attempt lives as long). */
const SIGN_IN_SECONDS = 600;

/** The sign-in routes that are not a bus endpoint's, for the OpenAPI document. */
export const SIGN_IN_OPERATIONS: DescribedOperation[] = [
  {
    method: "get",
    path: "/auth/oidc/start",
    operationId: "sign_in.start",
    summary:
      "Start a sign-in with the identity provider of the email's domain or of the account: a redirect to it (beyond the spec)",
    credential: "none",
    query: SignInStartQuery,
    redirect: 302,
  },
  {
    method: "get",
    path: "/auth/oidc/callback",
    operationId: "sign_in.callback",
    summary:
      "Where the identity provider sends the browser back: sets the session cookie, a redirect to the dashboard (beyond the spec)",
    credential: "none",
    redirect: 303,
  },
  {
    method: "get",
    path: "/auth/session",
    operationId: "sign_in.session",
    summary:
      "Who the caller is, and with the session cookie the CSRF token its changes carry (beyond the spec)",
    credential: "token or session",
    reply: SessionInfo,
  },
  {
    method: "post",
    path: "/auth/sign-out",
    operationId: "sign_in.sign_out",
    summary: "End the browser session of a sign-in with the identity provider (beyond the spec)",
    credential: "session",
    reply: Empty,
  },
];

/** Back to the dashboard's sign-in page, saying why the sign-in did not happen. */
const backToSignIn = (res: Response, reason: string) =>
  res.redirect(303, `/#/sign-in?${new URLSearchParams({ sign_in_error: reason })}`);

/**
 * The browser's half of sign-in with the account's identity provider (docs/API.md "Sign-in with your
 * identity provider"): to the provider with a state bound to this browser by a cookie, back to the
 * callback, whose code the control-plane redeems, and into the dashboard with a session cookie.
 */
export function signInPublicRoutes(
  nc: NatsConnection,
  timeoutMs: number,
  rateLimited: RequestHandler,
): Router {
  const router = Router();
  // A browser's navigation: a refusal goes back to the sign-in page, saying why, not to a JSON body.
  router.get("/auth/oidc/start", rateLimited, async (req, res) => {
    try {
      const query = SignInStartQuery.parse(req.query);
      const started = await request(
        nc,
        ControlPlane.signInStart,
        { ...query, redirect_uri: `${siteOf(req)}${CALLBACK_PATH}` },
        { timeoutMs },
      );
      setCookie(req, res, SIGN_IN_COOKIE, started.state, {
        path: CALLBACK_PATH,
        maxAgeSeconds: SIGN_IN_SECONDS,
      });
      res.redirect(302, started.authorization_url);
    } catch (error) {
      backToSignIn(res, toAppError(error)?.message ?? "the sign-in could not start; try again");
    }
  });

  router.get("/auth/oidc/callback", rateLimited, async (req, res) => {
    clearCookie(req, res, SIGN_IN_COOKIE, CALLBACK_PATH);
    const state = typeof req.query.state === "string" ? req.query.state : "";
    const bound = cookiesOf(req).get(SIGN_IN_COOKIE);
    // A callback this browser did not start (a forged link, another's code) signs nobody in.
    if (!state || !bound || !sameSecret(state, bound)) {
      backToSignIn(res, "this sign-in was not started in this browser: start again");
      return;
    }
    if (typeof req.query.error === "string") {
      const described =
        typeof req.query.error_description === "string" ? `: ${req.query.error_description}` : "";
      backToSignIn(res, `the identity provider refused the sign-in (${req.query.error}${described})`);
      return;
    }
    try {
      const session = await request(
        nc,
        ControlPlane.signInFinish,
        {
          state,
          callback_url: `${siteOf(req)}${req.originalUrl}`,
          ...requestOriginOf(req),
        },
        { timeoutMs: Math.max(timeoutMs, 15_000) },
      );
      const maxAgeSeconds = Math.max(0, Math.floor((Date.parse(session.expires_at) - Date.now()) / 1000));
      setCookie(req, res, SESSION_COOKIE, session.session_token, { path: "/", maxAgeSeconds });
      res.redirect(303, "/#/");
    } catch (error) {
      backToSignIn(res, toAppError(error)?.message ?? "the sign-in failed; try again");
    }
  });
  // What the sign-in routes' middleware refuses (a rate limit): the browser goes back to the sign-in page.
  const signInErrors: ErrorRequestHandler = (error, _req, res, next) => {
    const refusal = toAppError(error);
    if (refusal) backToSignIn(res, refusal.message);
    else next(error);
  };
  router.use("/auth/oidc", signInErrors);
  return router;
}

/** The signed-in side: the session (and its CSRF token), signing out, and the provider's settings. */
export function signInRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  const add = <E extends Endpoint>(spec: RouteSpec<E>) => mount(router, nc, timeoutMs, spec);

  router.get("/auth/session", (req, res, next) => {
    try {
      const caller = callerOf(req);
      const session = sessionOf(req);
      res.json({
        user_id: caller.user_id,
        email: caller.email,
        name: caller.name,
        role: caller.role,
        account_id: caller.account_id,
        ...(session ? { csrf_token: csrfTokenOf(session) } : {}),
      } satisfies SessionInfo);
    } catch (error) {
      next(error);
    }
  });

  router.post("/auth/sign-out", async (req, res, next) => {
    try {
      if (!sessionOf(req)) throw unauthenticated("sign-out ends a browser session; this request has none");
      await request(nc, ControlPlane.signOut, { caller: callerOf(req) }, { timeoutMs });
      clearCookie(req, res, SESSION_COOKIE, "/");
      res.json({});
    } catch (error) {
      next(error);
    }
  });

  add({
    method: "get",
    path: "/identity-provider",
    summary: "Get the account's OpenID Connect provider, its client secret never shown (beyond the spec)",
    access: "reader",
    endpoint: ControlPlane.identityProviderGet,
    toRequest: (_req, caller) => ({ caller }),
  });
  add({
    method: "put",
    path: "/identity-provider",
    summary: "Set the account's OpenID Connect provider, owner only (beyond the spec)",
    access: "owner",
    endpoint: ControlPlane.identityProviderPut,
    toRequest: (req, caller) => ({ caller, body: IdentityProviderBody.parse(req.body ?? {}) }),
  });
  add({
    method: "delete",
    path: "/identity-provider",
    summary:
      "Turn sign-in with the identity provider off and forget its settings, owner only (beyond the spec)",
    access: "owner",
    endpoint: ControlPlane.identityProviderDelete,
    toRequest: (_req, caller) => ({ caller }),
  });
  return router;
}
