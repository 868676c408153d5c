/**
 * The consistency the services that keep state in MongoDB (control-plane, consumption) rely on,
 * spread into each one's connection options so every collection inherits it. Caps and tokens
 * depend on these writes: a token's revocation, a budget rule's limit, a member's removal
 * (control-plane), and the journal of settled usage the cap counters are rebuilt from
 * (consumption). On a replica set:
 *
 * - `w: "majority"`, `journal: true`: a write acknowledged by the primary alone is rolled back
 *   when that primary dies before a secondary copied it; a revoked token would come back, a
 *   settled batch would be lost and its usage spent twice. Acknowledged means on disk on most
 *   members, so it survives a failover.
 * - `readConcern: "majority"`: a read returns only what survives a failover, so nobody is handed a
 *   limit or a token that a rollback later undoes.
 * - `readPreference: "primary"`: a secondary lags; a token revoked a moment ago would still read as
 *   valid there, and a consumption leader taking over must read every journal entry its
 *   predecessor had acknowledged.
 *
 * They carry the connection string's option names: the driver takes an option given in code over
 * the same one in the URL, so a MONGO_URL saying `w=1` or `readConcernLevel=local` cannot weaken
 * them (a `writeConcern` object would lose to the URL's `journal=false`). A single server (a
 * standalone mongod, FerretDB) is its own majority: the same options hold there (FerretDB accepts
 * and ignores them).
 */
export const MONGO_CONSISTENCY = {
  w: "majority",
  journal: true,
  readConcernLevel: "majority",
  readPreference: "primary",
} as const;
