import { request } from "@agentnet/bus";
import { type Caller, ControlPlane, type VerifyProviderReply } from "@agentnet/contracts";
import { providerCredentialAad, seal, unseal } from "@agentnet/sealing";
import { describeKey } from "@agentnet/vendor-auth/keys";
import { handleChange, handleCreate } from "../audit/changes";
import { requireAccountWideGrant, requireWriter } from "../domain/access";
import {
  credentialKindOf,
  fieldsFromCreate,
  mergeProviderUpdate,
  needsVendorCheck,
  type ProviderFields,
} from "../domain/providers";
import type { ProviderDoc } from "../store/agent-models";
import { toProvider } from "../store/agent-views";
import {
  announceConfigChange,
  createListingBook,
  type HandlerContext,
  handle,
  loadOwned,
  refuseIfPoliciesUse,
} from "./context";
import { assertConfigFits } from "./snapshot";

export function registerProviderHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  /** Asks the verifier; a refusal comes back as its 422 and leaves nothing written. */
  const verify = (fields: ProviderFields, apiKey: string): Promise<VerifyProviderReply> =>
    request(
      ctx.nc,
      ctx.verifier.verifyProvider,
      {
        catalog_provider_id: fields.provider_id,
        upstream_url: fields.upstream_url,
        api_key: apiKey,
        skip_tls_verification: fields.skip_tls_verification,
        extra_values: fields.extra_values,
      },
      { timeoutMs: ctx.verifyTimeoutMs },
    );

  const describeVerification = (reply: VerifyProviderReply) =>
    reply.outcome === "verified" ? "verified" : `unverified:${reply.reason}`;

  const openKey = (doc: ProviderDoc) =>
    unseal(ctx.sealingKey, doc.sealed_api_key, providerCredentialAad(doc.account_id, doc._id));

  const load = (caller: Caller, id: string) =>
    loadOwned<ProviderDoc>(models.Provider, caller, id, "provider");

  /** A provider as reads show it: with its cooldown while a proxy tries it last. */
  const read = (doc: ProviderDoc) => {
    const cooldown = ctx.proxyCooldowns.of(doc.account_id, doc._id, Date.now());
    return cooldown ? { ...toProvider(doc), cooldown } : toProvider(doc);
  };

  const listings = createListingBook(ctx);

  handle(ctx, ControlPlane.providersList, async ({ caller, page, version }) => {
    requireAccountWideGrant(caller);
    return listings.page(caller.account_id, { page, version }, async () => {
      const docs = await models.Provider.find({ account_id: caller.account_id })
        .sort({ created_at: 1, _id: 1 })
        .lean();
      return JSON.stringify(docs.map(read));
    });
  });

  handle(ctx, ControlPlane.providersGet, async ({ caller, provider_id }) => {
    requireAccountWideGrant(caller);
    return read(await load(caller, provider_id));
  });

  handleCreate(ctx, ControlPlane.providersCreate, async ({ caller, body }, _msg, id) => {
    requireWriter(caller);
    const fields = fieldsFromCreate(body);
    const credentialKind = credentialKindOf(fields.provider_id, body.api_key);
    const verification = await verify(fields, body.api_key);
    const document = {
      _id: id,
      account_id: caller.account_id,
      ...fields,
      sealed_api_key: seal(ctx.sealingKey, body.api_key, providerCredentialAad(caller.account_id, id)),
      verification: describeVerification(verification),
      credential_kind: credentialKind,
    };
    await assertConfigFits(ctx, caller.account_id, { after: document });
    const created = await models.Provider.create(document);
    ctx.logger.info(
      { account_id: caller.account_id, provider: id, verification: describeVerification(verification) },
      "provider created",
    );
    announceConfigChange(ctx, caller.account_id);
    return toProvider(created.toObject());
  });

  handleChange(
    ctx,
    ControlPlane.providersUpdate,
    { id: (r) => r.provider_id },
    async ({ caller, provider_id, body }) => {
      requireWriter(caller);
      const stored = await load(caller, provider_id);
      const next = mergeProviderUpdate(stored, body);
      const storedKey = openKey(stored);
      const update: Partial<ProviderDoc> = { ...next };
      // A new key, or the stored one for another catalog entry, must be one the entry takes.
      if (
        (body.api_key !== undefined && body.api_key !== storedKey) ||
        next.provider_id !== stored.provider_id
      ) {
        update.credential_kind = credentialKindOf(next.provider_id, body.api_key ?? storedKey);
      } else if (!stored.credential_kind) {
        const described = describeKey(next.provider_id, storedKey);
        if (described.kind) update.credential_kind = described.kind;
      }
      if (needsVendorCheck(stored, next, { stored: storedKey, sent: body.api_key })) {
        // A refusal throws here, before anything is written: the stored record stays unchanged.
        update.verification = describeVerification(await verify(next, body.api_key ?? storedKey));
      }
      if (body.api_key !== undefined && body.api_key !== storedKey) {
        update.sealed_api_key = seal(
          ctx.sealingKey,
          body.api_key,
          providerCredentialAad(caller.account_id, stored._id),
        );
      }
      await assertConfigFits(ctx, caller.account_id, { before: stored, after: { ...stored, ...update } });
      const updated = await models.Provider.findOneAndUpdate(
        { _id: stored._id, account_id: caller.account_id },
        { $set: update },
        { new: true },
      ).lean();
      if (!updated) return toProvider(await load(caller, provider_id));
      announceConfigChange(ctx, caller.account_id);
      return toProvider(updated);
    },
  );

  handleChange(
    ctx,
    ControlPlane.providersDelete,
    { id: (r) => r.provider_id },
    async ({ caller, provider_id }) => {
      requireWriter(caller);
      const stored = await load(caller, provider_id);
      await refuseIfPoliciesUse(ctx, caller.account_id, {
        field: "destination_provider_ids",
        id: stored._id,
        what: "provider",
        code: "provider",
      });
      await models.Provider.deleteOne({ _id: stored._id, account_id: caller.account_id });
      announceConfigChange(ctx, caller.account_id);
      return {};
    },
  );
}
