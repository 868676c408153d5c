import type { Request, RequestHandler, Response } from "express";

/**
 * Keeps the mount path of the router it is used on, for `routePatternOf`: a router hands
 * `req.baseUrl` back to its parent when an error leaves it, and the answer (which names the span
 * and labels the metrics) comes from the error middleware after that.
 */
export const keepMountPath: RequestHandler = (req, res, next) => {
  res.locals.mountPath = req.baseUrl;
  next();
};

/**
 * The matched route's pattern under its router's mount path (`/api/users/:userId`), never the URL:
 * ids in paths would make a name per resource. Undefined when no route matched. A route declared
 * with several literal paths (`/healthz`, `/readyz`) is the one that matched.
 */
export function routePatternOf(req: Request, res: Response): string | undefined {
  const route: unknown = req.route;
  if (typeof route !== "object" || route === null || !("path" in route)) return undefined;
  const mount = typeof res.locals.mountPath === "string" ? res.locals.mountPath : req.baseUrl;
  return typeof route.path === "string" ? `${mount}${route.path}` : req.path;
}
