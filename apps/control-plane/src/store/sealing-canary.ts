import { SealingError, type SealingKeys, seal, unseal } from "@agentnet/sealing";
import type { AgentModels } from "./agent-models";

const CANARY_ID = "sealing-key";
const CANARY_TEXT = "agentnet sealing canary";

/**
 * Proves at start that the configured key opens what this database holds: the first start seals a
 * canary, every later start must open it. A wrong key stops the service with a clear message
 * instead of failing on the first provider it touches.
 */
export async function verifySealingKey(models: AgentModels, key: SealingKeys): Promise<void> {
  const existing = await models.SealingCanary.findById(CANARY_ID).lean();
  if (!existing) {
    await models.SealingCanary.updateOne(
      { _id: CANARY_ID },
      { $setOnInsert: { sealed: seal(key, CANARY_TEXT, CANARY_ID) } },
      { upsert: true },
    );
    return verifySealingKey(models, key);
  }
  try {
    if (unseal(key, existing.sealed, CANARY_ID) === CANARY_TEXT) return;
  } catch (error) {
    if (!(error instanceof SealingError)) throw error;
  }
  throw new Error(
    `AGN_SEALING_KEY (keys ${key.all.map((k) => k.kid).join(", ")}) does not open the credentials in this database (sealed with key ${existing.sealed.kid}); start with the key they were sealed with`,
  );
}

/** After a re-seal: the canary is sealed with the current key, so a start without it fails clearly. */
export async function resealCanary(models: AgentModels, keys: SealingKeys): Promise<void> {
  await models.SealingCanary.updateOne(
    { _id: CANARY_ID },
    { $set: { sealed: seal(keys, CANARY_TEXT, CANARY_ID) } },
    { upsert: true },
  );
}
