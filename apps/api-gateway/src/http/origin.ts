import type { RequestOrigin } from "@agentnet/contracts";
import type { Request } from "express";

/** The gateway's own address as the client reached it (scheme behind trusted proxies, and host): where it sends a browser back. */
export const siteOf = (req: Request): string => `${req.protocol}://${req.get("host") ?? "localhost"}`;

/** Where the request came from, for the audit trail: the client's address (behind the proxies Express trusts) and agent. */
export const requestOriginOf = (req: Request): RequestOrigin => {
  const userAgent = req.get("user-agent");
  return {
    ...(req.ip ? { address: req.ip.slice(0, 64) } : {}),
    ...(userAgent ? { user_agent: userAgent.slice(0, 512) } : {}),
  };
};
