import { type Caller, ControlPlane, conflict, type McpUserCredential } from "@agentnet/contracts";
import { mcpUserCredentialAad, seal } from "@agentnet/sealing";
import { handleChange } from "../audit/changes";
import type { McpServerDoc, McpUserCredentialDoc } from "../store/agent-models";
import { announceConfigChange, type HandlerContext, handle, loadOwned } from "./context";

/** A member's credential for a server is stored under this id: one per member and server. */
export const mcpUserCredentialId = (serverId: string, userId: string) => `${serverId}|${userId}`;

/**
 * Per-user credentials of MCP servers (docs/API.md "MCP servers"): each member sets their own value
 * of a `per_user` server's header, sealed to them, the server and the account; nobody reads it back,
 * and only the proxy opens it, for that member's own calls.
 */
export function registerMcpUserCredentialHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  /** The caller's account's server, when it takes per-user credentials. */
  const perUserServer = async (caller: Caller, serverId: string): Promise<McpServerDoc> => {
    const server = await loadOwned<McpServerDoc>(models.McpServer, caller, serverId, "MCP server");
    if (server.credential_kind !== "per_user") {
      throw conflict(
        "mcp_server.not_per_user",
        `MCP server ${server.name} takes no per-user credential: ${server.credential_kind === "header" ? "an admin sets its one credential" : "it needs none"}`,
      );
    }
    return server;
  };

  const shown = (server: McpServerDoc, stored: McpUserCredentialDoc | null): McpUserCredential => ({
    server_id: server._id,
    header_name: server.credential_header ?? "",
    set: stored !== null,
    ...(stored ? { updated_at: stored.updated_at.toISOString() } : {}),
  });

  handle(ctx, ControlPlane.mcpMyCredentialGet, async ({ caller, server_id }) => {
    const server = await perUserServer(caller, server_id);
    const stored = await models.McpUserCredential.findOne({
      _id: mcpUserCredentialId(server._id, caller.user_id),
      account_id: caller.account_id,
    }).lean();
    return shown(server, stored);
  });

  handleChange(
    ctx,
    ControlPlane.mcpMyCredentialPut,
    { id: (r) => mcpUserCredentialId(r.server_id, r.caller.user_id) },
    async ({ caller, server_id, body }) => {
      const server = await perUserServer(caller, server_id);
      const sealed = seal(
        ctx.sealingKey,
        body.value,
        mcpUserCredentialAad(caller.account_id, server._id, caller.user_id),
      );
      const stored = await models.McpUserCredential.findOneAndUpdate(
        { _id: mcpUserCredentialId(server._id, caller.user_id), account_id: caller.account_id },
        {
          $set: { sealed },
          $setOnInsert: { account_id: caller.account_id, server_id: server._id, user_id: caller.user_id },
        },
        { upsert: true, new: true },
      ).lean();
      // An admin who changed the server meanwhile (not per-user any more, another origin, deleted)
      // drops members' values after storing the change: a value that landed after that is dropped
      // here, so none outlives the server it was set for.
      const now = await models.McpServer.findOne({ _id: server._id, account_id: caller.account_id }).lean();
      if (now?.credential_kind !== "per_user" || new URL(now.url).origin !== new URL(server.url).origin) {
        await models.McpUserCredential.deleteOne({
          _id: mcpUserCredentialId(server._id, caller.user_id),
          account_id: caller.account_id,
        });
        throw conflict(
          "mcp_server.changed",
          `MCP server ${server.name} changed while your credential was being set, and no longer takes it; read it again`,
        );
      }
      ctx.logger.info(
        { account_id: caller.account_id, mcp_server: server._id, user_id: caller.user_id },
        "MCP per-user credential set",
      );
      // Proxies keep opened credentials per account snapshot: a new one reaches them with the next.
      announceConfigChange(ctx, caller.account_id);
      return shown(server, stored);
    },
  );

  handleChange(
    ctx,
    ControlPlane.mcpMyCredentialDelete,
    { id: (r) => mcpUserCredentialId(r.server_id, r.caller.user_id) },
    async ({ caller, server_id }) => {
      const server = await perUserServer(caller, server_id);
      const removed = await models.McpUserCredential.deleteOne({
        _id: mcpUserCredentialId(server._id, caller.user_id),
        account_id: caller.account_id,
      });
      if (removed.deletedCount > 0) announceConfigChange(ctx, caller.account_id);
      return {};
    },
  );

  handle(ctx, ControlPlane.mcpUserCredentialOf, async ({ account_id, server_id, user_id }) => {
    const stored = await models.McpUserCredential.findOne({
      _id: mcpUserCredentialId(server_id, user_id),
      account_id,
    }).lean();
    return stored ? { sealed: stored.sealed } : {};
  });
}
