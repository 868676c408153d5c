import compression from "compression";
import express, { type Router } from "express";

/**
 * The built dashboard holds an API token in sessionStorage, so the page allows nothing it does not
 * load from this origin: scripts, styles, fonts, images and API calls are same-origin, nothing may
 * frame it, and no referrer leaves it. React sets `style` through the DOM, which `style-src 'self'`
 * allows; there is no inline script.
 */
export const DASHBOARD_SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** Vite names built assets by content hash: a changed file gets a new name, so caching never goes stale. */
const HASHED_ASSET = /^\/assets\/.+-[A-Za-z0-9_-]{8,}\.\w+$/;

/**
 * Serves the built dashboard (apps/dashboard/dist) for GETs outside /api, compressed, with the
 * security headers; hashed assets are cached for a year, everything else (index.html) revalidated.
 * Unknown paths get index.html (the app routes by hash, but deep links still land on the app).
 */
export function dashboardRoutes(root: string): Router {
  const router = express.Router();
  router.use(compression());
  router.use((_req, res, next) => {
    for (const [name, value] of Object.entries(DASHBOARD_SECURITY_HEADERS)) res.setHeader(name, value);
    next();
  });
  router.use(
    express.static(root, {
      index: "index.html",
      fallthrough: true,
      setHeaders: (res, _path) => {
        const path = res.req.path;
        res.setHeader(
          "cache-control",
          HASHED_ASSET.test(path) ? "public, max-age=31536000, immutable" : "no-cache",
        );
      },
    }),
  );
  router.get(/^\/(?!api(?:\/|$)).*/, (_req, res) => {
    res.setHeader("cache-control", "no-cache");
    res.sendFile("index.html", { root });
  });
  return router;
}
