import { type NatsConnection, request } from "@agentnet/bus";
import {
  type Caller,
  ControlPlane,
  forbidden,
  hasAccountWideGrant,
  unauthenticated,
} from "@agentnet/contracts";
import { tokenResolveRequest } from "@agentnet/service-kit";
import type { Request, RequestHandler } from "express";

/** Who may call a route. Finer, per-resource rules are the control-plane's. */
export type Access = "member" | "reader" | "writer" | "owner";

const allowed: Record<Access, (caller: Caller) => boolean> = {
  member: () => true,
  reader: (caller) => hasAccountWideGrant(caller.role),
  writer: (caller) => caller.role === "owner" || caller.role === "admin",
  owner: (caller) => caller.role === "owner",
};

/** Resolved tokens, trusted for a few seconds so a burst of calls costs one control-plane lookup. */
class CallerCache {
  private readonly entries = new Map<string, { caller: Caller; expiresAt: number }>();
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(token: string): Caller | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.expiresAt > Date.now()) return entry.caller;
    this.entries.delete(token);
    return undefined;
  }

  set(token: string, caller: Caller): void {
    if (this.ttlMs === 0) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { caller, expiresAt: Date.now() + this.ttlMs });
  }
}

const TOKEN_SCHEME = /^Token\s+(\S+)\s*$/i;

/** `Authorization: Token <token>` → the caller, or 401. */
export function authenticate(nc: NatsConnection, ttlMs: number): RequestHandler {
  const cache = new CallerCache(ttlMs);
  return async (req, res, next) => {
    try {
      const token = TOKEN_SCHEME.exec(req.headers.authorization ?? "")?.[1];
      if (!token) throw unauthenticated("send your API token as 'Authorization: Token <token>'");
      let caller = cache.get(token);
      if (!caller) {
        const resolve = tokenResolveRequest(token);
        if (!resolve) throw unauthenticated();
        caller = await request(nc, ControlPlane.authResolve, resolve);
        cache.set(token, caller);
      }
      res.locals.caller = caller;
      next();
    } catch (error) {
      next(error);
    }
  };
}

export const callerOf = (req: Request): Caller => {
  const caller: unknown = req.res?.locals.caller;
  if (!caller) throw unauthenticated();
  return caller as Caller;
};

export const requireAccess =
  (access: Access): RequestHandler =>
  (req, _res, next) => {
    if (!allowed[access](callerOf(req))) {
      next(forbidden(`your role may not ${req.method} ${req.path}`));
      return;
    }
    next();
  };
