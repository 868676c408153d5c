import { createHash, timingSafeEqual } from "node:crypto";
import type { Request, Response } from "express";

/**
 * The browser session of a sign-in with the identity provider (docs/API.md "Sign-in with your
 * identity provider"): its token in an HttpOnly cookie, which scripts never read, SameSite=Lax (the
 * provider's redirect back is a cross-site navigation, which Strict would strip). Every change it
 * makes must carry `x-csrf-token`, a value derived from the session that only the dashboard, reading
 * `/api/auth/session` from the same origin, learns.
 */
export const SESSION_COOKIE = "agn_session";
/** The state of a sign-in on its way through the provider: binds the callback to the browser that started it. */
export const SIGN_IN_COOKIE = "agn_sign_in";
export const CSRF_HEADER = "x-csrf-token";

/** A request's cookies by name (RFC 6265's `name=value; name=value`), values percent-decoded. */
export function cookiesOf(req: Request): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    try {
      if (!cookies.has(name)) cookies.set(name, decodeURIComponent(value));
    } catch {
      // A value that is not percent-encoding is not one of ours.
    }
  }
  return cookies;
}

/** The CSRF token of a session: a one-way function of its token, so it proves nothing else. */
export const csrfTokenOf = (sessionToken: string): string =>
  createHash("sha256").update(`agentnet csrf\0${sessionToken}`).digest("base64url");

export const sameSecret = (a: string, b: string): boolean => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/** Sets a cookie the way every agentnet cookie is set: HttpOnly, SameSite=Lax, Secure over HTTPS. */
export function setCookie(
  req: Request,
  res: Response,
  name: string,
  value: string,
  options: { path: string; maxAgeSeconds: number },
): void {
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${options.path}`,
    `Max-Age=${options.maxAgeSeconds}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(req.secure ? ["Secure"] : []),
  ];
  res.append("set-cookie", parts.join("; "));
}

export const clearCookie = (req: Request, res: Response, name: string, path: string) =>
  setCookie(req, res, name, "", { path, maxAgeSeconds: 0 });
