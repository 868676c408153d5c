import { type NatsConnection, request, requestPaged } from "@agentnet/bus";
import {
  auditActionOf,
  auditTargetTypeOf,
  type Caller,
  ControlPlane,
  type Endpoint,
  forbidden,
  isPaged,
  type RequestOf,
} from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { Request, RequestHandler, Router } from "express";
import { type Access, callerOf, hasAccess } from "./auth";
import { toAppError } from "./errors";
import { requestOriginOf } from "./origin";

type Method = "get" | "post" | "put" | "delete";

export interface RouteSpec<E extends Endpoint> {
  method: Method;
  path: string;
  /** One line saying what the route does (the OpenAPI operation's summary). */
  summary: string;
  access: Access;
  endpoint: E;
  /** Builds the bus request from the HTTP request; body and query are parsed with contract schemas here. */
  toRequest: (req: Request, caller: Caller) => RequestOf<E>;
  /** HTTP status of a success; 200 unless a route says otherwise. */
  status?: number;
}

/** The routes mounted on each router, for the OpenAPI document (see `openApiDocument`). */
const mounted = new WeakMap<Router, RouteSpec<Endpoint>[]>();

/** What `mount` put on `router`, in order. */
export const routesOf = (router: Router): readonly RouteSpec<Endpoint>[] => mounted.get(router) ?? [];

/** What a route answers: a paged endpoint's whole value, any other endpoint's reply. */
export const replyOf = (endpoint: Endpoint) => (isPaged(endpoint) ? endpoint.value : endpoint.reply);

/**
 * Mounts a route that forwards to one control-plane endpoint: access check, request mapping and
 * validation, one NATS request (one per page for a paged endpoint, joined), the reply as JSON.
 * Errors fall through to the one error middleware.
 */
export function mount<E extends Endpoint>(
  router: Router,
  nc: NatsConnection,
  timeoutMs: number,
  spec: RouteSpec<E>,
) {
  const isChange = spec.method !== "get";
  const forward: RequestHandler = async (req, res, next) => {
    const caller = { ...callerOf(req), origin: requestOriginOf(req) };
    let asked = false;
    try {
      if (!hasAccess(spec.access, caller)) throw forbidden(`your role may not ${req.method} ${req.path}`);
      const payload = spec.toRequest(req, caller);
      asked = true;
      const reply = isPaged(spec.endpoint)
        ? await requestPaged(nc, spec.endpoint, payload, { timeoutMs })
        : await request(nc, spec.endpoint, payload, { timeoutMs });
      res.status(spec.status ?? 200).json(reply);
    } catch (error) {
      // A change stopped here never reached the control-plane, which writes every other entry.
      if (isChange && !asked) await recordStopped(nc, timeoutMs, spec.endpoint, req, caller, error);
      next(error);
    }
  };
  router[spec.method](spec.path, forward);
  mounted.set(router, [...routesOf(router), spec as unknown as RouteSpec<Endpoint>]);
}

/**
 * The audit entry of a change the api-gateway stopped (a role that may not, a body that does not
 * parse): written before the client is answered; a trail that cannot take it is logged, and the
 * client still gets the reason its change was stopped.
 */
async function recordStopped(
  nc: NatsConnection,
  timeoutMs: number,
  endpoint: Endpoint,
  req: Request,
  caller: Caller,
  error: unknown,
): Promise<void> {
  const stopped = toAppError(error) ?? { status: 500, code: "internal" };
  const action = auditActionOf(endpoint);
  const type = auditTargetTypeOf(action);
  if (!type) return; // A POST that changes nothing (model discovery): no entry.
  // The id in the path names the target; a create's target has none yet.
  const id = req.method === "POST" ? undefined : Object.values(req.params).at(-1);
  try {
    await request(
      nc,
      ControlPlane.auditRefused,
      {
        caller,
        refusal: {
          action,
          target: { type, ...(id ? { id: String(id).slice(0, 256) } : {}) },
          status: stopped.status,
          error_code: stopped.code,
        },
      },
      { timeoutMs },
    );
  } catch (failure) {
    (req.app.locals.logger as Logger | undefined)?.error(
      { err: failure, action },
      "the audit entry of a stopped change was not written",
    );
  }
}

/** A path parameter, which Express 5 types loosely. */
export const param = (req: Request, name: string): string => String(req.params[name] ?? "");
