import { ControlPlane } from "@agentnet/contracts";
import { providerCredentialAad, SealingError, seal, unseal } from "@agentnet/sealing";
import { resealCanary } from "../store/sealing-canary";
import { announceConfigChange, type HandlerContext, handle } from "./context";
import { resealSigningSecrets } from "./notifications";

/**
 * Key rotation: every provider credential (and webhook signing secret) not sealed with the current
 * key is opened with the key ring and sealed again with the current key. Each write is conditional
 * on the envelope it read, so a credential replaced meanwhile is left as its new writer sealed it.
 * Proxies drop the snapshots of the accounts touched.
 */
export function registerSealingHandlers(ctx: HandlerContext) {
  const { models } = ctx;
  handle(ctx, ControlPlane.sealingReseal, async () => {
    const current = ctx.sealingKey.current.kid;
    const stale = await models.Provider.find({ "sealed_api_key.kid": { $ne: current } }).lean();
    const accounts = new Set<string>();
    let resealed = 0;
    let unopened = 0;
    for (const doc of stale) {
      const aad = providerCredentialAad(doc.account_id, doc._id);
      let plaintext: string;
      try {
        plaintext = unseal(ctx.sealingKey, doc.sealed_api_key, aad);
      } catch (error) {
        if (!(error instanceof SealingError)) throw error;
        unopened++;
        ctx.logger.warn(
          { provider: doc._id, kid: doc.sealed_api_key.kid },
          "credential not opened by any key",
        );
        continue;
      }
      const sealed = seal(ctx.sealingKey, plaintext, aad);
      const written = await models.Provider.updateOne(
        { _id: doc._id, account_id: doc.account_id, "sealed_api_key.iv": doc.sealed_api_key.iv },
        { $set: { sealed_api_key: sealed } },
      );
      if (written.modifiedCount === 1) {
        resealed++;
        accounts.add(doc.account_id);
      }
    }
    const secrets = await resealSigningSecrets(ctx);
    resealed += secrets.resealed;
    unopened += secrets.unopened;
    if (unopened === 0) await resealCanary(models, ctx.sealingKey);
    for (const accountId of accounts) announceConfigChange(ctx, accountId);
    const total = (await models.Provider.countDocuments({})) + secrets.total;
    ctx.logger.info(
      { current_key: current, resealed, unopened },
      "re-sealed provider credentials and signing secrets",
    );
    return { current_key: current, resealed, already_current: total - resealed - unopened, unopened };
  });
}
