import type { NatsConnection } from "@agentnet/bus";
import { type Endpoint, NotificationSettingsBody, Notifications } from "@agentnet/contracts";
import { Router } from "express";
import { mount, type RouteSpec } from "../http/route";

/**
 * Not in the spec (it leaves events and webhooks out): the account's webhook for alerts — budget
 * thresholds crossed, provider credentials refused — and the log of its deliveries. Reads need the
 * account-wide grant, changes owner or admin, as for the rest of the configuration.
 */
export function notificationRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  const add = <E extends Endpoint>(spec: RouteSpec<E>) => mount(router, nc, timeoutMs, spec);
  const path = "/agent-network/notifications";

  add({
    method: "get",
    path,
    summary: "Get the webhook for alerts (404 when none is set)",
    access: "reader",
    endpoint: Notifications.get,
    toRequest: (_req, caller) => ({ caller }),
  });
  add({
    method: "post",
    path,
    summary: "Set the webhook for alerts; answers its signing secret, this once",
    access: "writer",
    endpoint: Notifications.create,
    toRequest: (req, caller) => ({ caller, body: NotificationSettingsBody.parse(req.body ?? {}) }),
  });
  add({
    method: "put",
    path,
    summary: "Replace the webhook's settings (the signing secret stays)",
    access: "writer",
    endpoint: Notifications.update,
    toRequest: (req, caller) => ({ caller, body: NotificationSettingsBody.parse(req.body ?? {}) }),
  });
  add({
    method: "delete",
    path,
    summary: "Remove the webhook; alerts stop",
    access: "writer",
    endpoint: Notifications.delete,
    toRequest: (_req, caller) => ({ caller }),
  });
  add({
    method: "post",
    path: `${path}/secret`,
    summary: "Replace the signing secret; answers the new one, this once",
    access: "writer",
    endpoint: Notifications.rotateSecret,
    toRequest: (_req, caller) => ({ caller }),
  });
  add({
    method: "get",
    path: `${path}/deliveries`,
    summary: "The latest 100 webhook deliveries, newest first: status, attempts, last error",
    access: "reader",
    endpoint: Notifications.deliveries,
    toRequest: (_req, caller) => ({ caller }),
  });
  return router;
}
