import { type Handler, type NatsConnection, type Subscription, serve } from "@agentnet/bus";
import { type Endpoint, QUEUE, type Verifier } from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { CheckContext } from "../checks/context";
import { discoverModels } from "../checks/discover";
import { verifyMcpServer } from "../checks/verify-mcp-server";
import { verifyProvider } from "../checks/verify-provider";
import { withoutCredential } from "../domain/outcomes";

const handle = <E extends Endpoint>(
  nc: NatsConnection,
  logger: Logger,
  endpoint: E,
  handler: Handler<E>,
): Subscription =>
  serve(nc, endpoint, handler, {
    queue: QUEUE.verifier,
    // The request (with its api_key) is deliberately not logged.
    onUnexpectedError: (err, subject) => logger.error({ err, subject }, "handler failed"),
  });

/** Answers `agn.verify.provider`, `agn.verify.discover` and `agn.verify.mcp_server` (or their test-prefixed subjects). */
export function registerVerifierHandlers(
  nc: NatsConnection,
  ctx: CheckContext,
  endpoints: typeof Verifier,
): Subscription[] {
  return [
    handle(nc, ctx.logger, endpoints.verifyProvider, async (req) => {
      try {
        return await verifyProvider(ctx, req);
      } catch (error) {
        throw withoutCredential(error, req.api_key);
      }
    }),
    handle(nc, ctx.logger, endpoints.discover, async (req) => {
      try {
        return await discoverModels(ctx, req);
      } catch (error) {
        throw withoutCredential(error, req.api_key);
      }
    }),
    handle(nc, ctx.logger, endpoints.verifyMcpServer, async (req) => {
      try {
        return await verifyMcpServer(ctx, req);
      } catch (error) {
        throw req.credential ? withoutCredential(error, req.credential.value) : error;
      }
    }),
  ];
}
