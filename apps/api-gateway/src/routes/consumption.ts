import type { NatsConnection } from "@agentnet/bus";
import { Consumption } from "@agentnet/contracts";
import { Router } from "express";
import { mount } from "../http/route";

/**
 * GET /agent-network/consumption (spec endpoint 4): every consumption counter of the account,
 * newest window first. Open to every member; the consumption service narrows a caller without the
 * account-wide grant to their own user counters and their groups' counters. GET
 * /agent-network/consumption/caps: the caps that apply to the caller, with used, held and remaining.
 */
export function consumptionRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  mount(router, nc, timeoutMs, {
    method: "get",
    path: "/agent-network/consumption",
    summary: "List the account's consumption counters, newest window first",
    access: "member",
    endpoint: Consumption.list,
    toRequest: (_req, caller) => ({ caller }),
  });
  // Not in the spec: the caps that apply to the caller, so members can see their own budget.
  mount(router, nc, timeoutMs, {
    method: "get",
    path: "/agent-network/consumption/caps",
    summary: "The caps that apply to the caller: limit, used, held and remaining",
    access: "member",
    endpoint: Consumption.caps,
    toRequest: (_req, caller) => ({ caller }),
  });
  return router;
}
