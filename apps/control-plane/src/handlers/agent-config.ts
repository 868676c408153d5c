import { ControlPlane } from "@agentnet/contracts";
import { buildAgentConfig } from "../domain/agent-config";
import { createListingBook, type HandlerContext, handle } from "./context";
import { loadAccountConfig, renderSnapshot } from "./snapshot";

export function registerAgentConfigHandlers(ctx: HandlerContext) {
  // Keyed by caller: what each sees depends on its groups.
  const agentConfigs = createListingBook(ctx);

  // Open to every authenticated caller: it shows only what that caller can reach.
  handle(ctx, ControlPlane.agentConfig, ({ caller, page, version }) =>
    agentConfigs.page(`${caller.account_id}/${caller.user_id}`, { page, version }, async () => {
      const [config, own] = await Promise.all([
        loadAccountConfig(ctx, caller.account_id),
        ctx.models.McpUserCredential.find(
          { account_id: caller.account_id, user_id: caller.user_id },
          { server_id: 1 },
        ).lean(),
      ]);
      const ownCredentials = new Set(own.map((doc) => doc.server_id));
      return JSON.stringify(
        buildAgentConfig({ ...config, callerGroupIds: caller.group_ids, ownCredentials }),
      );
    }),
  );

  // Rendered once per change and answered page by page, whoever asks and for whichever page.
  handle(ctx, ControlPlane.gatewaySnapshot, ({ account_id, page, version, fresh }) => {
    if (fresh && version === undefined) ctx.snapshots.invalidate(account_id);
    return ctx.snapshots.page(account_id, { page, version }, () => renderSnapshot(ctx, account_id));
  });
}
