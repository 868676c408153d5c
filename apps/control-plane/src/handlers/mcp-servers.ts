import { request } from "@agentnet/bus";
import {
  type Caller,
  ControlPlane,
  conflict,
  type McpCredentialBody,
  type VerifyMcpServerReply,
  type VerifyMcpServerRequest,
} from "@agentnet/contracts";
import { mcpServerCredentialAad, seal, unseal } from "@agentnet/sealing";
import { handleChange, handleCreate } from "../audit/changes";
import { requireAccountWideGrant, requireWriter } from "../domain/access";
import { mergeMcpServerUpdate, type StoredMcpCredential } from "../domain/mcp-servers";
import type { McpServerDoc } from "../store/agent-models";
import { toMcpServer } from "../store/agent-views";
import { isDuplicateKey } from "../store/models";
import { announceConfigChange, type HandlerContext, handle, loadOwned, refuseIfPoliciesUse } from "./context";
import { assertConfigFits } from "./snapshot";

/**
 * Why the verifier's check of a server carries no credential, for the kinds whose credential the
 * verifier cannot have: a 401 or 403 then stores the server unverified rather than refusing it.
 */
const CREDENTIAL_NOT_SENT: Partial<
  Record<McpCredentialBody["kind"], VerifyMcpServerRequest["credential_not_sent"]>
> = {
  per_user: "per_member_credential",
  oauth_client_credentials: "oauth_client_credentials",
};

/** MCP servers (docs/API.md "MCP servers"): configuration beside providers, granted by policies. */
export function registerMcpServerHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  const nameTaken = (name: string) =>
    conflict("mcp_server.exists", `an MCP server named ${name} already exists`);

  /** The stored form of a credential: a shared value sealed to this server of this account. */
  const storedCredential = (
    accountId: string,
    serverId: string,
    credential: McpCredentialBody,
  ): StoredMcpCredential => {
    switch (credential.kind) {
      case "oauth_client_credentials":
        return {
          credential_kind: "oauth_client_credentials",
          oauth_token_url: credential.token_url,
          oauth_client_id: credential.client_id,
          ...(credential.scope ? { oauth_scope: credential.scope } : {}),
          sealed_credential: seal(
            ctx.sealingKey,
            credential.client_secret,
            mcpServerCredentialAad(accountId, serverId),
          ),
        };
      case "header":
        return {
          credential_kind: "header",
          credential_header: credential.header_name,
          sealed_credential: seal(
            ctx.sealingKey,
            credential.value,
            mcpServerCredentialAad(accountId, serverId),
          ),
        };
      case "per_user":
        return { credential_kind: "per_user", credential_header: credential.header_name };
      case "none":
        return { credential_kind: "none" };
    }
  };

  const load = (caller: Caller, id: string) =>
    loadOwned<McpServerDoc>(models.McpServer, caller, id, "MCP server");

  /** Asks the verifier to initialize the server and list its tools; a refusal comes back as its 422. */
  const verify = async (fields: {
    url: string;
    skip_tls_verification: boolean;
    credential: { header_name: string; value: string } | undefined;
    kind: McpCredentialBody["kind"];
  }): Promise<string> => {
    const notSent = CREDENTIAL_NOT_SENT[fields.kind];
    const reply: VerifyMcpServerReply = await request(
      ctx.nc,
      ctx.verifier.verifyMcpServer,
      {
        url: fields.url,
        skip_tls_verification: fields.skip_tls_verification,
        ...(fields.credential ? { credential: fields.credential } : {}),
        ...(notSent ? { credential_not_sent: notSent } : {}),
      },
      { timeoutMs: ctx.verifyTimeoutMs },
    );
    return reply.outcome === "verified" ? `verified:${reply.tools}_tools` : `unverified:${reply.reason}`;
  };

  /**
   * The credential a check sends: the one a body sends, else the stored one (opened). A per-user
   * server is checked without one: no member's credential is the server's.
   */
  const credentialToCheck = (stored: McpServerDoc | undefined, sent: McpCredentialBody | undefined) => {
    if (sent)
      return sent.kind === "header" ? { header_name: sent.header_name, value: sent.value } : undefined;
    if (stored?.credential_kind !== "header" || !stored.sealed_credential) return undefined;
    const value = unseal(
      ctx.sealingKey,
      stored.sealed_credential,
      mcpServerCredentialAad(stored.account_id, stored._id),
    );
    return { header_name: stored.credential_header ?? "", value };
  };

  handle(ctx, ControlPlane.mcpServersList, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const docs = await models.McpServer.find({ account_id: caller.account_id })
      .sort({ created_at: 1, _id: 1 })
      .lean();
    return docs.map(toMcpServer);
  });

  handle(ctx, ControlPlane.mcpServersGet, async ({ caller, server_id }) => {
    requireAccountWideGrant(caller);
    return toMcpServer(await load(caller, server_id));
  });

  handleCreate(ctx, ControlPlane.mcpServersCreate, async ({ caller, body }, _msg, id) => {
    requireWriter(caller);
    const { credential, ...fields } = body;
    // A refusal throws here, before anything is written.
    const verification = await verify({
      url: body.url,
      skip_tls_verification: body.skip_tls_verification,
      credential: credentialToCheck(undefined, credential),
      kind: credential.kind,
    });
    const document = {
      _id: id,
      account_id: caller.account_id,
      ...fields,
      ...storedCredential(caller.account_id, id, credential),
      verification,
    };
    await assertConfigFits(ctx, caller.account_id, { after: document });
    try {
      const created = await models.McpServer.create(document);
      ctx.logger.info({ account_id: caller.account_id, mcp_server: id, verification }, "MCP server created");
      announceConfigChange(ctx, caller.account_id);
      return toMcpServer(created.toObject());
    } catch (error) {
      if (isDuplicateKey(error)) throw nameTaken(body.name);
      throw error;
    }
  });

  handleChange(
    ctx,
    ControlPlane.mcpServersUpdate,
    { id: (r) => r.server_id },
    async ({ caller, server_id, body }) => {
      requireWriter(caller);
      const stored = await load(caller, server_id);
      const { set, unset } = mergeMcpServerUpdate(body, (credential) =>
        storedCredential(caller.account_id, stored._id, credential),
      );
      const skipTls = body.skip_tls_verification ?? stored.skip_tls_verification;
      if (
        body.url !== stored.url ||
        body.credential !== undefined ||
        skipTls !== stored.skip_tls_verification
      ) {
        // Where it is, or how it is reached, changed: checked again; a refusal leaves the stored server as it was.
        set.verification = await verify({
          url: body.url,
          skip_tls_verification: skipTls,
          credential: credentialToCheck(stored, body.credential),
          kind: body.credential?.kind ?? stored.credential_kind,
        });
      }
      await assertConfigFits(ctx, caller.account_id, { before: stored, after: { ...stored, ...set } });
      try {
        const updated = await models.McpServer.findOneAndUpdate(
          { _id: stored._id, account_id: caller.account_id },
          Object.keys(unset).length > 0 ? { $set: set, $unset: unset } : { $set: set },
          { new: true },
        ).lean();
        if (!updated) return toMcpServer(await load(caller, server_id));
        const moved = new URL(updated.url).origin !== new URL(stored.url).origin;
        if (stored.credential_kind === "per_user" && (updated.credential_kind !== "per_user" || moved)) {
          // Members' own values are for this per-user server where they set them: none follows the
          // server to another origin (a member must send theirs there themselves), and none is kept
          // once it is not per-user.
          await models.McpUserCredential.deleteMany({ account_id: caller.account_id, server_id: stored._id });
        }
        announceConfigChange(ctx, caller.account_id);
        return toMcpServer(updated);
      } catch (error) {
        if (isDuplicateKey(error)) throw nameTaken(body.name);
        throw error;
      }
    },
  );

  handleChange(
    ctx,
    ControlPlane.mcpServersDelete,
    { id: (r) => r.server_id },
    async ({ caller, server_id }) => {
      requireWriter(caller);
      const stored = await load(caller, server_id);
      await refuseIfPoliciesUse(ctx, caller.account_id, {
        field: "mcp_servers.server_id",
        id: stored._id,
        what: "MCP server",
        code: "mcp_server",
      });
      await models.McpServer.deleteOne({ _id: stored._id, account_id: caller.account_id });
      await models.McpUserCredential.deleteMany({ account_id: caller.account_id, server_id: stored._id });
      announceConfigChange(ctx, caller.account_id);
      return {};
    },
  );
}
