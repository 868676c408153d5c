import type { NatsConnection } from "@agentnet/bus";
import { Consumption } from "@agentnet/contracts";
import { Router } from "express";
import { mount } from "../http/route";

/**
 * GET /agent-network/consumption (spec endpoint 4): every consumption counter of the account,
 * newest window first. Open to every member; the consumption service narrows a caller without the
 * account-wide grant to their own user counters and their groups' counters.
 */
export function consumptionRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  mount(router, nc, timeoutMs, {
    method: "get",
    path: "/agent-network/consumption",
    access: "member",
    endpoint: Consumption.list,
    toRequest: (_req, caller) => ({ caller }),
  });
  return router;
}
