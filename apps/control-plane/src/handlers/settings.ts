import { jsonOrUndefined } from "@agentnet/bus";
import {
  ControlPlane,
  conflict,
  Events,
  notFound,
  ProxyHeartbeat,
  preconditionFailed,
  unconfiguredSettings,
  unprocessable,
} from "@agentnet/contracts";
import { newId } from "@agentnet/service-kit";
import { handleChange } from "../audit/changes";
import { requireAccountWideGrant, requireWriter } from "../domain/access";
import {
  allocateEndpoint,
  assertAssignedUnchanged,
  assertNotLoopback,
  clusterAddressesCovering,
  endpointSource,
} from "../domain/settings";
import { toSettings } from "../store/agent-views";
import { isDuplicateKey } from "../store/models";
import { announceConfigChange, type HandlerContext, handle } from "./context";

/** Random labels collide only by astronomically bad luck; a few retries turn that into never. */
const ALLOCATION_ATTEMPTS = 3;

/**
 * The settings lifecycle of the spec's states table, and proxy heartbeats for its DELETE rule (and
 * for the providers they cool down, which provider reads show).
 */
export function registerSettingsHandlers(ctx: HandlerContext) {
  const { models } = ctx;

  ctx.nc.subscribe(Events.proxyHeartbeat, {
    callback: (error, msg) => {
      if (error) return;
      const heartbeat = ProxyHeartbeat.safeParse(jsonOrUndefined(msg.string()));
      if (!heartbeat.success) return;
      const { proxy_id, endpoints, cooling_providers } = heartbeat.data;
      const now = Date.now();
      ctx.activeEndpoints.record(endpoints, now);
      // Only a heartbeat's first message names them; an older proxy's never do.
      if (cooling_providers) ctx.proxyCooldowns.record(proxy_id, cooling_providers, now);
    },
  });

  handle(ctx, ControlPlane.settingsGet, async ({ caller }) => {
    requireAccountWideGrant(caller);
    const stored = await models.Settings.findOne({ account_id: caller.account_id }).lean();
    return stored ? toSettings(stored) : unconfiguredSettings();
  });

  handleChange(ctx, ControlPlane.settingsCreate, {}, async ({ caller, body }) => {
    requireWriter(caller);
    const source = endpointSource(body);
    if (source.dedicated) {
      assertNotLoopback("endpoint", source.endpoint);
      const cluster = await models.Settings.findOne({
        dedicated: false,
        proxy_address: { $in: clusterAddressesCovering(source.endpoint) },
        account_id: { $ne: caller.account_id },
      }).lean();
      if (cluster) {
        throw unprocessable(
          "settings.endpoint_taken",
          `endpoint ${source.endpoint} is, or is under, a cluster address another account allocates endpoints from`,
          [{ path: "endpoint", message: "under another account's cluster address" }],
        );
      }
    } else {
      assertNotLoopback("proxy_address", source.proxyAddress);
    }
    const fields = {
      account_id: caller.account_id,
      proxy_address: source.dedicated ? "" : source.proxyAddress,
      dedicated: source.dedicated,
      enable_log_collection: body.enable_log_collection,
      enable_prompt_collection: body.enable_prompt_collection,
      redact_pii: body.redact_pii,
      access_log_retention_days: body.access_log_retention_days,
    };
    for (let attempt = 1; ; attempt++) {
      const endpoint = source.dedicated
        ? source.endpoint
        : allocateEndpoint(source.proxyAddress, newId().slice(0, 12));
      try {
        const created = await models.Settings.create({ _id: newId(), endpoint, ...fields });
        announceConfigChange(ctx, caller.account_id);
        return toSettings(created.toObject());
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // The unique indexes decided; this read only tells which one refused (FerretDB's error
        // does not name the index).
        if (await models.Settings.exists({ account_id: caller.account_id })) {
          throw conflict(
            "settings.exists",
            "the account already has agent-network settings; use PUT to change them",
          );
        }
        if (source.dedicated) {
          throw unprocessable("settings.endpoint_taken", `endpoint ${endpoint} is held by another account`, [
            { path: "endpoint", message: "held by another account" },
          ]);
        }
        if (attempt >= ALLOCATION_ATTEMPTS) throw error;
      }
    }
  });

  handleChange(ctx, ControlPlane.settingsUpdate, {}, async ({ caller, body }) => {
    requireWriter(caller);
    const stored = await models.Settings.findOne({ account_id: caller.account_id }).lean();
    if (!stored) throw notFound("agent-network settings");
    assertAssignedUnchanged(stored, body);
    const updated = await models.Settings.findOneAndUpdate(
      { _id: stored._id, account_id: caller.account_id },
      {
        $set: {
          enable_log_collection: body.enable_log_collection,
          enable_prompt_collection: body.enable_prompt_collection,
          redact_pii: body.redact_pii,
          access_log_retention_days: body.access_log_retention_days,
        },
      },
      { new: true },
    ).lean();
    if (!updated) throw notFound("agent-network settings");
    announceConfigChange(ctx, caller.account_id);
    return toSettings(updated);
  });

  handleChange(ctx, ControlPlane.settingsDelete, {}, async ({ caller }) => {
    requireWriter(caller);
    const stored = await models.Settings.findOne({ account_id: caller.account_id }).lean();
    if (!stored) throw notFound("agent-network settings");
    if (await models.Provider.exists({ account_id: caller.account_id })) {
      throw preconditionFailed(
        "settings.providers_exist",
        "delete the account's providers before its settings",
      );
    }
    if (ctx.activeEndpoints.isActive(stored.endpoint)) {
      throw preconditionFailed("settings.endpoint_active", `a proxy is actively serving ${stored.endpoint}`);
    }
    // The endpoint is released, not reserved: the unique index frees it with the record.
    await models.Settings.deleteOne({ _id: stored._id, account_id: caller.account_id });
    announceConfigChange(ctx, caller.account_id);
    return {};
  });

  handle(ctx, ControlPlane.settingsOfAccount, async ({ account_id }) => {
    const stored = await models.Settings.findOne({ account_id }).lean();
    return stored ? toSettings(stored) : unconfiguredSettings();
  });

  handle(ctx, ControlPlane.retentionList, async () => {
    const all = await models.Settings.find({}, { account_id: 1, access_log_retention_days: 1 }).lean();
    return all.map((s) => ({
      account_id: s.account_id,
      access_log_retention_days: s.access_log_retention_days,
    }));
  });
}
