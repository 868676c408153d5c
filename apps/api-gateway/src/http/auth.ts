import { followCallerRevocations, type NatsConnection, type RevocableCallers, request } from "@agentnet/bus";
import {
  type Caller,
  type CallersRevokedEvent,
  ControlPlane,
  hasAccountWideGrant,
  revokesCaller,
  unauthenticated,
} from "@agentnet/contracts";
import { type Logger, tokenResolveRequest } from "@agentnet/service-kit";
import type { Request, RequestHandler } from "express";

/** Who may call a route. Finer, per-resource rules are the control-plane's. */
export type Access = "member" | "reader" | "writer" | "owner";

const allowed: Record<Access, (caller: Caller) => boolean> = {
  member: () => true,
  reader: (caller) => hasAccountWideGrant(caller.role),
  writer: (caller) => caller.role === "owner" || caller.role === "admin",
  owner: (caller) => caller.role === "owner",
};

/**
 * Resolved tokens, trusted for a few seconds so a burst of calls costs one control-plane lookup.
 * A revocation (`agn.callers.revoked`) drops the callers it names at once, and a lookup under way
 * when it came does not cache its answer (it may predate the change); after a lost connection
 * (revocations may have been missed) everything is forgotten. The TTL only bounds a revocation
 * that never arrived.
 */
export class CallerCache implements RevocableCallers {
  private readonly entries = new Map<string, { caller: Caller; tokenHash: string; expiresAt: number }>();
  /** Counts revocations: a lookup that saw it change while under way does not cache its answer. */
  private generation = 0;

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

  /** What `set` needs to know whether a revocation came while the caller was looked up. */
  lookupStarted(): number {
    return this.generation;
  }

  set(token: string, tokenHash: string, caller: Caller, startedAt: number): void {
    if (this.ttlMs === 0 || startedAt !== this.generation) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { caller, tokenHash, expiresAt: Date.now() + this.ttlMs });
  }

  revoke(event: CallersRevokedEvent): void {
    for (const [token, entry] of this.entries) {
      if (revokesCaller(event, entry.caller, entry.tokenHash)) this.entries.delete(token);
    }
    this.generation++;
  }

  distrustAll(): void {
    this.entries.clear();
    this.generation++;
  }
}

const TOKEN_SCHEME = /^Token\s+(\S+)\s*$/i;

/**
 * `Authorization: Token <token>` → the caller, or 401. Resolved callers are cached `ttlMs` and
 * follow revocations on `nc` (see `CallerCache`).
 */
export function authenticate(nc: NatsConnection, ttlMs: number, logger: Logger): RequestHandler {
  const cache = new CallerCache(ttlMs);
  if (ttlMs > 0) {
    followCallerRevocations(nc, cache, (issues) =>
      logger.warn({ issues }, "unreadable caller revocation: every cached caller is forgotten"),
    );
  }
  return async (req, res, next) => {
    try {
      const token = TOKEN_SCHEME.exec(req.headers.authorization ?? "")?.[1];
      if (!token) throw unauthenticated("send your API token as 'Authorization: Token <token>'");
      let caller = cache.get(token);
      if (!caller) {
        const resolve = tokenResolveRequest(token);
        if (!resolve) throw unauthenticated();
        const startedAt = cache.lookupStarted();
        caller = await request(nc, ControlPlane.authResolve, resolve);
        cache.set(token, resolve.token_hash, caller, startedAt);
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

/** Whether `caller`'s role opens a route of `access`. */
export const hasAccess = (access: Access, caller: Caller): boolean => allowed[access](caller);
