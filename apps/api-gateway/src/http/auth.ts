import { followCallerRevocations, type NatsConnection, type RevocableCallers, request } from "@agentnet/bus";
import {
  type Caller,
  type CallersRevokedEvent,
  ControlPlane,
  forbidden,
  hasAccountWideGrant,
  revokesCaller,
  unauthenticated,
} from "@agentnet/contracts";
import { type Logger, tokenResolveRequest } from "@agentnet/service-kit";
import type { Request, RequestHandler } from "express";
import { CSRF_HEADER, cookiesOf, csrfTokenOf, SESSION_COOKIE, sameSecret } from "./session-cookie";

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
      const header = req.headers.authorization;
      const session = header ? undefined : cookiesOf(req).get(SESSION_COOKIE);
      const token = session ?? TOKEN_SCHEME.exec(header ?? "")?.[1];
      if (!token) throw unauthenticated("send your API token as 'Authorization: Token <token>', or sign in");
      let caller = cache.get(token);
      if (!caller) {
        const resolve = tokenResolveRequest(token);
        if (!resolve) throw unauthenticated();
        const startedAt = cache.lookupStarted();
        caller = await request(nc, ControlPlane.authResolve, resolve);
        cache.set(token, resolve.token_hash, caller, startedAt);
      }
      if (session && !SAFE_METHODS.has(req.method)) refuseCrossSite(req, session);
      res.locals.caller = caller;
      if (session) res.locals.session = session;
      next();
    } catch (error) {
      next(error);
    }
  };
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A change made with the session cookie must come from the dashboard: with the session's CSRF
 * token (which only a page of this origin can read) and, when the browser names one, from this
 * origin. A cookie alone proves only that a browser holds it, and browsers send it on requests
 * other sites make them send.
 */
function refuseCrossSite(req: Request, session: string): void {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `${req.protocol}://${req.get("host")}`) {
    throw forbidden(`a change from another origin (${origin}) is refused`);
  }
  const sent = req.get(CSRF_HEADER);
  if (!sent || !sameSecret(sent, csrfTokenOf(session))) {
    throw forbidden(
      `a change made with the session cookie needs the ${CSRF_HEADER} header from /api/auth/session`,
    );
  }
}

/** The session token the caller authenticated with, when it came as the session cookie. */
export const sessionOf = (req: Request): string | undefined => {
  const session: unknown = req.res?.locals.session;
  return typeof session === "string" ? session : undefined;
};

export const callerOf = (req: Request): Caller => {
  const caller: unknown = req.res?.locals.caller;
  if (!caller) throw unauthenticated();
  return caller as Caller;
};

/** Whether `caller`'s role opens a route of `access`. */
export const hasAccess = (access: Access, caller: Caller): boolean => allowed[access](caller);
