import { type NatsConnection, request, requestPaged } from "@agentnet/bus";
import { type Caller, type Endpoint, isPaged, type RequestOf } from "@agentnet/contracts";
import type { Request, RequestHandler, Router } from "express";
import { type Access, callerOf, requireAccess } from "./auth";

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
  const forward: RequestHandler = async (req, res, next) => {
    try {
      const payload = spec.toRequest(req, callerOf(req));
      const reply = isPaged(spec.endpoint)
        ? await requestPaged(nc, spec.endpoint, payload, { timeoutMs })
        : await request(nc, spec.endpoint, payload, { timeoutMs });
      res.status(spec.status ?? 200).json(reply);
    } catch (error) {
      next(error);
    }
  };
  router[spec.method](spec.path, requireAccess(spec.access), forward);
  mounted.set(router, [...routesOf(router), spec as unknown as RouteSpec<Endpoint>]);
}

/** A path parameter, which Express 5 types loosely. */
export const param = (req: Request, name: string): string => String(req.params[name] ?? "");
