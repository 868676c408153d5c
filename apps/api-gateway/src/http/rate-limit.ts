import { AppError } from "@agentnet/contracts";
import type { RequestHandler } from "express";
import { type AugmentedRequest, rateLimit } from "express-rate-limit";

const WINDOW_MS = 60_000;

/**
 * Bounds how often one client address may call the public endpoints that need no credential: each
 * sign-in or device-code start stores something, each callback, poll or refresh checks a secret.
 * Counted in this replica's memory over a minute (a replica is an independent bound, as its other
 * limits are). Past the limit a request is refused 429 with `Retry-After`, passed on as an error so
 * each route answers in its own shape (a browser back to the sign-in page, an agent in OAuth's).
 * `perMinute` 0 turns the bound off.
 */
export function publicAuthRateLimit(perMinute: number): RequestHandler {
  if (perMinute === 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    standardHeaders: "draft-8",
    legacyHeaders: false,
    handler: (req, _res, next) => {
      const resetAt = (req as AugmentedRequest).rateLimit?.resetTime?.getTime() ?? Date.now() + WINDOW_MS;
      const seconds = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
      next(
        new AppError(
          429,
          "too_many_requests",
          `too many sign-in requests from your address: try again in ${seconds} s`,
        ),
      );
    },
    // The client address is Express's `req.ip` (`trust proxy`: one hop with AGN_TRUST_PROXY); the
    // library's check of a header the setting ignores would only log to the console.
    validate: { xForwardedForHeader: false },
  });
}
