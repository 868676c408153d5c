import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { streamReplicasOf } from "./connect";
import { millis, nanos, patiently, withReplicas } from "./jetstream";

export interface LeadershipOptions {
  /** What is contended for: at most one holder at a time per key (a JetStream KV key). */
  key: string;
  /** Who this process is, written into the key so operators can see the holder. */
  holder: string;
  /**
   * How long the lease outlives its holder's last renewal. Renewals run every sixth of it; a holder
   * that could not renew for two thirds of it stops leading before anyone else can start. By
   * default `defaultLeaseTtlMs` of the bucket's replicas; a bucket whose keys live longer (made
   * with a longer TTL) sets it, since a holder must never outlive its key.
   */
  ttlMs?: number | undefined;
  bucket?: string;
  /** Becomes the holder: get ready to serve. The lease is renewed while this runs. */
  onElected: () => Promise<void>;
  /** Stops serving: `released` on a graceful stop (state may be saved), `lost` when the lease is gone. */
  onDeposed: (reason: "released" | "lost") => Promise<void>;
  onError: (error: unknown) => void;
}

export interface Leadership {
  isLeader(): boolean;
  /** Gives the lease up (after `onDeposed("released")`) so a standby takes over at once. */
  release(): Promise<void>;
  /** Steps down now, as when the lease is lost, e.g. when another holder's write was detected. */
  stepDown(): Promise<void>;
}

/** On one NATS server: the bucket has no leader to elect, a crashed holder is replaced after this. */
export const DEFAULT_LEASE_TTL_MS = 6_000;

/**
 * On a cluster: the bucket's stream elects a new leader 4 to 9 s after its leader's node dies
 * (nats-server's Raft election timeouts) and takes no write meanwhile. A holder renewed at most a
 * sixth of the TTL before that and may go two thirds of it without a renewal: 13.3 - 3.3 = 10 s
 * rides the slowest election out, so losing a node never costs the leadership (and the
 * consumption leader's state). A crashed holder is replaced that much later.
 */
export const REPLICATED_LEASE_TTL_MS = 20_000;

export const defaultLeaseTtlMs = (replicas: number) =>
  replicas > 1 ? REPLICATED_LEASE_TTL_MS : DEFAULT_LEASE_TTL_MS;

/** A lease operation's timeout is a sixth of the TTL, never less than this (a busy host answers late). */
const MIN_OPERATION_TIMEOUT_MS = 1_000;

/**
 * The lease bucket, on `streamReplicasOf(nc)` servers: a lease on one node of a cluster would go
 * with that node, and no standby could be elected until it came back. `Kvm.create` leaves an
 * existing bucket as it is, so one made with other replicas, or whose keys live shorter than this
 * holder's TTL (made on one server, or by an earlier version), is brought to these here. A bucket
 * whose keys live longer is never shortened (a holder of that TTL may be leading on it): its max
 * age is the TTL of every holder.
 */
async function leaseBucket(
  nc: NatsConnection,
  bucket: string,
  wantedTtlMs: number | undefined,
): Promise<{ kv: KV; ttlMs: number }> {
  const replicas = streamReplicasOf(nc);
  const wanted = wantedTtlMs ?? defaultLeaseTtlMs(replicas);
  // The bucket's max age is the lease: a key nobody renews disappears, and `create` then succeeds.
  const stream = `KV_${bucket}`;
  try {
    // Patient, as the streams are: a replica started beside a cluster still electing its leaders.
    return await patiently(async () => {
      await new Kvm(nc).create(bucket, { ttl: wanted, history: 1, replicas });
      const jsm = await jetstreamManager(nc);
      const { config } = await jsm.streams.info(stream);
      const ttlMs = Math.max(wanted, millis(config.max_age));
      if (config.num_replicas !== replicas || millis(config.max_age) !== ttlMs)
        await jsm.streams.update(stream, { ...config, num_replicas: replicas, max_age: nanos(ttlMs) });
      // Its operations time out well within the key's life: one that waits on a frozen node would
      // otherwise hold back the next attempt past the moment the key expires.
      const operations = jetstream(nc, { timeout: Math.max(ttlMs / 6, MIN_OPERATION_TIMEOUT_MS) });
      const kv = await new Kvm(operations).open(bucket, { allow_direct: config.allow_direct });
      return { kv, ttlMs };
    });
  } catch (error) {
    throw withReplicas(error, stream, replicas);
  }
}

/**
 * Contends for a lease held in a JetStream KV bucket: one process leads, the others stand by and
 * take over once the leader releases the key or stops renewing it. Resolves after the first
 * attempt, so a sole process is leading (and ready) when this returns.
 */
export async function contendForLeadership(
  nc: NatsConnection,
  options: LeadershipOptions,
): Promise<Leadership> {
  const { kv, ttlMs } = await leaseBucket(nc, options.bucket ?? "agn_leases", options.ttlMs);
  let revision: number | undefined;
  let renewedAt = 0;
  let stopped = false;
  // Elections and depositions run one after the other, never interleaved.
  let transition: Promise<void> = Promise.resolve();
  let leading = false;
  /** Whether this process held the key before: after JetStream trouble it takes it back first. */
  let heldBefore = false;
  /** When JetStream last failed one of this process's attempts to take the key. */
  let troubleSeenAt = Number.NEGATIVE_INFINITY;

  const depose = (reason: "released" | "lost") => {
    if (revision === undefined) return transition;
    revision = undefined;
    transition = transition.then(async () => {
      if (!leading) return;
      leading = false;
      await options.onDeposed(reason).catch(options.onError);
    });
    return transition;
  };

  /** Whether the last renewal is so old that another process may soon take the expired key. */
  const renewalOverdue = () => revision !== undefined && Date.now() - renewedAt > (ttlMs * 2) / 3;

  /**
   * Renews the key, or tries to take it; resolves whether JetStream trouble got in the way (a holder
   * then tries again sooner than a round).
   */
  const attempt = async (): Promise<boolean> => {
    // The key's life starts when the bucket stores the write, after this: counted from here, the
    // holder's view of it is never longer than the bucket's.
    const sentAt = Date.now();
    if (revision !== undefined) {
      const renewing = revision;
      try {
        const renewed = await kv.update(options.key, options.holder, renewing);
        // Deposed while the renewal hung (`watchdog`): the key is taken back as a new election.
        if (revision !== renewing) return false;
        revision = renewed;
        renewedAt = sentAt;
        return false;
      } catch (error) {
        options.onError(error);
        // A renewal that timed out here may have been written there: the key still names this
        // holder, at a revision this process has not seen.
        const entry = isTaken(error) ? await kv.get(options.key).catch(() => null) : null;
        if (revision === renewing && entry?.operation === "PUT" && entry.string() === options.holder) {
          revision = entry.revision;
          return true;
        }
        // Either someone else holds the key now, or this holder cannot reach it: in both cases
        // another process may take over once the key expires, so stop well before that.
        if (revision === renewing && renewalOverdue()) await depose("lost");
        return true;
      }
    }
    if (stopped) return false;
    // Just after JetStream trouble (a NATS node lost or frozen, the bucket electing its own leader
    // for longer than the key lives), a standby leaves the holder the trouble cut off a lease's
    // TTL, several of its rounds even when one of them waited out a request timeout: that one takes
    // the key back with its state, while a new holder starts over (for the consumption leader:
    // waiting out its predecessor's leases). A holder that died costs its standby that TTL more.
    if (!heldBefore && Date.now() - troubleSeenAt < ttlMs) return false;
    let troubled = false;
    try {
      revision = await kv.create(options.key, options.holder);
    } catch (error) {
      // Held: by someone else, or still by this process after a lost connection outlived its
      // renewals (nobody else could take a key that never expired): then it is this holder's again.
      const entry = await kv.get(options.key).catch(() => null);
      // Anything but "the key exists" (a timeout, no responders: the bucket has no leader), or a
      // key neither taken nor readable: JetStream is in trouble. A key is read from any replica,
      // so a standby that only read it would not notice that its holder cannot renew it.
      if (!entry || !isTaken(error)) {
        options.onError(error);
        troubleSeenAt = Date.now();
        troubled = true;
      }
      if (entry?.string() !== options.holder) {
        // Another holder has it since: this one is no longer the one to take it back.
        if (entry) heldBefore = false;
        return troubled;
      }
      try {
        revision = await kv.update(options.key, options.holder, entry.revision);
      } catch {
        return troubled;
      }
    }
    renewedAt = sentAt;
    heldBefore = true;
    transition = transition.then(async () => {
      try {
        await options.onElected();
        leading = true;
      } catch (error) {
        options.onError(error);
        const held = revision;
        revision = undefined;
        if (held !== undefined) await kv.delete(options.key, { previousSeq: held }).catch(() => undefined);
      }
    });
    return troubled;
  };

  // A renewal can hang rather than fail (its NATS node frozen: the request waits for its timeout,
  // longer than the key lives): the holder stops leading on time all the same.
  const watchdog = setInterval(() => {
    if (renewalOverdue()) void depose("lost");
  }, ttlMs / 12);
  watchdog.unref();
  let timer: NodeJS.Timeout | undefined;
  let attempting: Promise<boolean> = Promise.resolve(false);
  // A holder whose renewal failed tries again at once: its NATS node frozen, the client moves to
  // another node within seconds, and a renewal sent from there before the key expires keeps the
  // leadership (and the consumption leader's state) where a round's wait would lose it.
  const loop = async () => {
    attempting = attempt().catch((error: unknown) => {
      options.onError(error);
      return false;
    });
    const troubled = await attempting;
    if (!stopped) timer = setTimeout(loop, troubled && heldBefore ? ttlMs / 12 : ttlMs / 6);
  };
  await loop();
  await transition;

  return {
    isLeader: () => leading,
    async release() {
      stopped = true;
      clearTimeout(timer);
      clearInterval(watchdog);
      // A renewal in flight moves the key past the revision read now, and the delete would miss:
      // the standby would then wait for the key to expire instead of taking over at once.
      await attempting;
      const held = revision;
      await depose("released");
      if (held !== undefined) await kv.delete(options.key, { previousSeq: held }).catch(() => undefined);
    },
    stepDown: () => depose("lost"),
  };
}

/** A create refused because the key exists: the bucket answered, someone holds it. */
const isTaken = (error: unknown) =>
  error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence;
