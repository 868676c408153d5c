import { ControlPlane, type SealedSecret } from "@agentnet/contracts";
import {
  identityGrantAad,
  identityProviderSecretAad,
  mcpServerCredentialAad,
  mcpUserCredentialAad,
  providerCredentialAad,
  SealingError,
  seal,
  unseal,
} from "@agentnet/sealing";
import { signingSecretAad } from "../domain/webhooks";
import type { McpServerDoc, McpUserCredentialDoc, ProviderDoc } from "../store/agent-models";
import type { NotificationSettingsDoc } from "../store/notification-models";
import { resealCanary } from "../store/sealing-canary";
import type { IdentityGrantDoc, IdentityProviderDoc } from "../store/sign-in-models";
import { announceConfigChange, type HandlerContext, handle } from "./context";

interface SealedDoc {
  _id: string;
  account_id: string;
}

/** A collection holding one sealed secret per document, and what each is sealed to. */
interface SealedCollection<D extends SealedDoc> {
  what: string;
  model: {
    find(filter: object): { lean(): PromiseLike<D[]> };
    updateOne(filter: object, update: object): PromiseLike<{ modifiedCount: number }>;
    countDocuments(filter: object): PromiseLike<number>;
  };
  /** The document field holding the envelope. */
  field: string;
  sealedOf: (doc: D) => SealedSecret | undefined;
  aadOf: (doc: D) => string;
  /** Whether proxies hold it in account snapshots, so a re-sealed account must be announced. */
  inSnapshot: boolean;
}

/**
 * Key rotation: every stored credential (provider keys, MCP server credentials and members' own
 * ones, webhook signing secrets) not sealed with the current key is opened with the key ring and sealed again with the
 * current key. Each write is conditional on the envelope it read, so a credential replaced
 * meanwhile is left as its new writer sealed it. Proxies drop the snapshots of the accounts touched.
 */
export function registerSealingHandlers(ctx: HandlerContext) {
  const { models } = ctx;
  const current = () => ctx.sealingKey.current.kid;

  async function reseal<D extends SealedDoc>(collection: SealedCollection<D>, accounts: Set<string>) {
    const held = { [collection.field]: { $exists: true } };
    const stale = await collection.model
      .find({ ...held, [`${collection.field}.kid`]: { $ne: current() } })
      .lean();
    let resealed = 0;
    let unopened = 0;
    for (const doc of stale) {
      const sealed = collection.sealedOf(doc);
      if (!sealed) continue;
      const aad = collection.aadOf(doc);
      let plaintext: string;
      try {
        plaintext = unseal(ctx.sealingKey, sealed, aad);
      } catch (error) {
        if (!(error instanceof SealingError)) throw error;
        unopened++;
        ctx.logger.warn(
          { what: collection.what, id: doc._id, account_id: doc.account_id, kid: sealed.kid },
          "secret not opened by any key",
        );
        continue;
      }
      const written = await collection.model.updateOne(
        { _id: doc._id, account_id: doc.account_id, [`${collection.field}.iv`]: sealed.iv },
        { $set: { [collection.field]: seal(ctx.sealingKey, plaintext, aad) } },
      );
      if (written.modifiedCount === 1) {
        resealed++;
        if (collection.inSnapshot) accounts.add(doc.account_id);
      }
    }
    const total = await collection.model.countDocuments(held);
    return { resealed, unopened, total };
  }

  handle(ctx, ControlPlane.sealingReseal, async () => {
    const accounts = new Set<string>();
    const outcomes = [
      await reseal<ProviderDoc>(
        {
          what: "provider credential",
          model: models.Provider,
          field: "sealed_api_key",
          sealedOf: (doc) => doc.sealed_api_key,
          aadOf: (doc) => providerCredentialAad(doc.account_id, doc._id),
          inSnapshot: true,
        },
        accounts,
      ),
      await reseal<McpServerDoc>(
        {
          what: "MCP server credential",
          model: models.McpServer,
          field: "sealed_credential",
          sealedOf: (doc) => doc.sealed_credential,
          aadOf: (doc) => mcpServerCredentialAad(doc.account_id, doc._id),
          inSnapshot: true,
        },
        accounts,
      ),
      await reseal<McpUserCredentialDoc>(
        {
          what: "MCP per-user credential",
          model: models.McpUserCredential,
          field: "sealed",
          sealedOf: (doc) => doc.sealed,
          aadOf: (doc) => mcpUserCredentialAad(doc.account_id, doc.server_id, doc.user_id),
          inSnapshot: true,
        },
        accounts,
      ),
      await reseal<IdentityProviderDoc>(
        {
          what: "identity provider client secret",
          model: models.IdentityProvider,
          field: "sealed_client_secret",
          sealedOf: (doc) => doc.sealed_client_secret,
          aadOf: (doc) => identityProviderSecretAad(doc.account_id),
          inSnapshot: false,
        },
        accounts,
      ),
      await reseal<IdentityGrantDoc>(
        {
          what: "identity provider refresh token",
          model: models.IdentityGrant,
          field: "sealed_refresh_token",
          sealedOf: (doc) => doc.sealed_refresh_token,
          aadOf: (doc) => identityGrantAad(doc.account_id, doc.user_id),
          inSnapshot: false,
        },
        accounts,
      ),
      await reseal<NotificationSettingsDoc>(
        {
          what: "signing secret",
          model: models.NotificationSettings,
          field: "sealed_secret",
          sealedOf: (doc) => doc.sealed_secret,
          aadOf: (doc) => signingSecretAad(doc.account_id),
          inSnapshot: false,
        },
        accounts,
      ),
    ];
    const sum = (key: "resealed" | "unopened" | "total") =>
      outcomes.reduce((total, outcome) => total + outcome[key], 0);
    const [resealed, unopened, total] = [sum("resealed"), sum("unopened"), sum("total")];
    if (unopened === 0) await resealCanary(models, ctx.sealingKey);
    for (const accountId of accounts) announceConfigChange(ctx, accountId);
    ctx.logger.info({ current_key: current(), resealed, unopened }, "re-sealed stored credentials");
    return { current_key: current(), resealed, already_current: total - resealed - unopened, unopened };
  });
}
