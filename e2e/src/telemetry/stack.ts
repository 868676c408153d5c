import { publishEvent, request } from "@agentnet/bus";
import {
  type Caller,
  ControlPlane,
  Events,
  type GatewayRequestEvent,
  type RequestOf,
  type Role,
  Telemetry,
} from "@agentnet/contracts";
import { hashToken } from "@agentnet/service-kit";
import { makeEvent, uniqueId } from "@agentnet/testkit";
import { startStack } from "../stack";

/**
 * The stack fixture with telemetry (hourly rollups off, so reads are computed from events) and
 * the helpers telemetry's tests drive it with: events published straight onto the request stream,
 * a barrier until they are stored, and the read paths over the bus and over HTTP.
 */
export async function startTelemetryStack() {
  const stack = await startStack({ telemetry: { rollupIntervalMs: 0 } });
  const { nc, warehouse, telemetry } = stack;
  if (!warehouse || !telemetry) throw new Error("the stack started without telemetry");

  const resolve = (token: string) => request(nc, ControlPlane.authResolve, { token_hash: hashToken(token) });

  /** A fresh account and its owner (as the gateway would resolve them), with nothing configured. */
  const newAccount = async () => {
    const boot = await request(nc, ControlPlane.accountsBootstrap, {
      email: `${uniqueId("owner")}@example.com`,
    });
    return { accountId: boot.account_id, owner: await resolve(boot.token), token: boot.token };
  };

  /** A member of the owner's account with a role and a token of their own. */
  const addMember = async (owner: Caller, role: Role, name = "Member") => {
    const user = await request(nc, ControlPlane.usersCreate, {
      caller: owner,
      body: { email: `${uniqueId("m")}@example.com`, name, role },
    });
    const token = await request(nc, ControlPlane.tokensCreate, {
      caller: owner,
      user_id: user.id,
      body: { name: "test", expires_in: 1 },
    });
    return { caller: await resolve(token.plain_token), token: token.plain_token };
  };

  const configure = (
    owner: Caller,
    body: { enable_log_collection?: boolean; access_log_retention_days?: number },
  ) =>
    request(nc, ControlPlane.settingsCreate, {
      caller: owner,
      body: { proxy_address: "proxy.example.com", ...body },
    });

  const publish = async (events: GatewayRequestEvent[], msgId = (e: GatewayRequestEvent) => e.id) => {
    for (const event of events)
      await publishEvent(nc, Events.requests(event.account_id), event, msgId(event));
  };

  /**
   * Publishes a marker event after everything else and waits until it is stored: the consumer
   * delivers in stream order and batches are written one after another, so all earlier events
   * are written (or terminated) by then.
   */
  const settle = async () => {
    const marker = makeEvent({ account_id: uniqueId("marker") });
    await publish([marker]);
    const deadline = Date.now() + 15_000;
    const stored = () =>
      warehouse.query("SELECT id FROM usage_events WHERE account_id = {a:String}", { a: marker.account_id });
    while ((await stored()).length === 0) {
      if (Date.now() > deadline) throw new Error("telemetry did not ingest the marker event within 15 s");
      await new Promise((done) => setTimeout(done, 50));
    }
  };

  const accessLogs = (caller: Caller, query: RequestOf<typeof Telemetry.accessLogs>["query"] = {}) =>
    request(nc, Telemetry.accessLogs, { caller, query });
  const sessions = (caller: Caller, query: RequestOf<typeof Telemetry.sessions>["query"] = {}) =>
    request(nc, Telemetry.sessions, { caller, query });
  const usage = (caller: Caller, query: RequestOf<typeof Telemetry.usageOverview>["query"] = {}) =>
    request(nc, Telemetry.usageOverview, { caller, query });

  const http = async <T = unknown>(path: string, token: string) => {
    const response = await fetch(`${stack.apiUrl}${path}`, {
      headers: { accept: "application/json", authorization: `Token ${token}` },
    });
    return { status: response.status, body: (await response.json()) as T };
  };

  return {
    nc,
    warehouse,
    telemetry,
    newAccount,
    addMember,
    configure,
    publish,
    settle,
    accessLogs,
    sessions,
    usage,
    http,
    stop: stack.stop,
  };
}

export type TelemetryStack = Awaited<ReturnType<typeof startTelemetryStack>>;
