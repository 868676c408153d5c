import type { Caller } from "@agentnet/contracts";
import type { HttpAnswer, HttpRequest } from "@agentnet/service-kit";
import type { ProxyContext } from "../context";
import { type AccountView, SnapshotUnavailable } from "../snapshot/cache";
import type { Wire } from "../wires";
import { callerToken } from "./body";
import { sendError } from "./errors";

/** The caller of a request, or undefined after answering 401 (or 503 when nobody can tell). */
export async function authenticate(
  ctx: ProxyContext,
  req: HttpRequest,
  res: HttpAnswer,
  wire: Wire,
  query: string,
): Promise<Caller | undefined> {
  const token = callerToken(req, wire.keyInQuery ? query : "");
  if (!token) {
    sendError(
      res,
      wire,
      401,
      "auth.missing_token",
      "send your agentnet token as Authorization: Bearer, x-api-key, api-key or x-goog-api-key",
    );
    return undefined;
  }
  let caller: Caller | undefined;
  try {
    caller = await ctx.callers.get(token);
  } catch (error) {
    ctx.logger.warn({ err: error }, "resolving a token failed");
    sendError(res, wire, 503, "auth.unavailable", "the token cannot be checked right now; try again");
    return undefined;
  }
  if (!caller) sendError(res, wire, 401, "auth.invalid_token", "invalid or expired token");
  return caller;
}

/** The caller's account snapshot, or undefined after answering 503 (the control-plane is away). */
export async function accountView(
  ctx: ProxyContext,
  res: HttpAnswer,
  wire: Wire,
  accountId: string,
): Promise<AccountView | undefined> {
  try {
    return await ctx.snapshots.get(accountId);
  } catch (error) {
    // One line per failed load, none for the requests its cached failure answers.
    if (!(error instanceof SnapshotUnavailable && error.repeated)) {
      const reason = error instanceof Error ? error.message : String(error);
      ctx.logger.warn({ account_id: accountId, reason }, "loading the account snapshot failed");
    }
    sendError(
      res,
      wire,
      503,
      "gateway.config_unavailable",
      "the gateway configuration cannot be loaded; try again",
    );
    return undefined;
  }
}
