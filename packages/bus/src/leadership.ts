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
   * How long the lease outlives its holder's last renewal. Renewals run every twelfth of it; a
   * holder that could not renew for two thirds of it stops leading before anyone else can start.
   * By default `SINGLE_SERVER_LEASE_TTL_MS` on one server and `REPLICATED_LEASE_TTL_MS` on a
   * cluster; a bucket whose keys live longer (made with a longer TTL) sets it, since a holder must
   * never outlive its key.
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
const SINGLE_SERVER_LEASE_TTL_MS = 6_000;

/**
 * On a cluster: the bucket's stream elects a new leader 4 to 9 s after its leader's node dies or
 * freezes (nats-server's Raft election timeouts) and takes no write meanwhile. A holder renewed at
 * most a round (1.7 s) before that, may go two thirds of the TTL (13.3 s) without a renewal, and
 * meanwhile tries again every 2.5 s at the most (a try timing out after 1.7 s, the next 0.8 s
 * later): an election that ends within about 10 s of the loss is ridden out, so losing a node
 * does not cost the leadership (and the consumption leader's state). A crashed holder is replaced
 * that much later: its key expires after the TTL, and a standby takes it within a round.
 */
export const REPLICATED_LEASE_TTL_MS = 20_000;

const defaultLeaseTtlMs = (replicas: number) =>
  replicas > 1 ? REPLICATED_LEASE_TTL_MS : SINGLE_SERVER_LEASE_TTL_MS;

/** How often the holder renews the key, and a standby tries to take it: a twelfth of the TTL. */
const roundMs = (ttlMs: number) => ttlMs / 12;

/**
 * Half a round: how soon a holder tries again after JetStream trouble (a try failed or timed out),
 * and how often it checks that its last renewal is not overdue.
 */
const halfRoundMs = (ttlMs: number) => ttlMs / 24;

/** A lease operation's timeout is a round, never less than this (a busy host answers late). */
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
  wantedTtlMs: number,
): Promise<{ kv: KV; ttlMs: number }> {
  const replicas = streamReplicasOf(nc);
  // The bucket's max age is the lease: a key nobody renews disappears, and `create` then succeeds.
  const stream = `KV_${bucket}`;
  try {
    // Patient, as the streams are: a replica started beside a cluster still electing its leaders.
    return await patiently(async () => {
      await new Kvm(nc).create(bucket, { ttl: wantedTtlMs, history: 1, replicas });
      const jsm = await jetstreamManager(nc);
      let { config } = await jsm.streams.info(stream);
      // Read again after each update: another process updating from what it read before this one's
      // update would put the old values back (an earlier version's replica, brought to 3 replicas).
      for (
        let updates = 0;
        config.num_replicas !== replicas || millis(config.max_age) < wantedTtlMs;
        updates++
      ) {
        if (updates === 3) throw new Error(`${stream} keeps being changed back (${JSON.stringify(config)})`);
        // In nanoseconds: through milliseconds, an age that is not whole ones may come back fractional.
        const maxAge = Math.max(nanos(wantedTtlMs), config.max_age);
        await jsm.streams.update(stream, {
          ...config,
          num_replicas: replicas,
          max_age: maxAge,
          // A bucket made by hand without a TTL remembers ids 2 minutes; the window must fit the age.
          duplicate_window: Math.min(config.duplicate_window, maxAge),
        });
        ({ config } = await jsm.streams.info(stream));
      }
      const ttlMs = millis(config.max_age);
      // Its operations time out well within the key's life: one that waits on a frozen node would
      // otherwise hold back the next attempt past the moment the key expires.
      const operations = jetstream(nc, { timeout: Math.max(roundMs(ttlMs), MIN_OPERATION_TIMEOUT_MS) });
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
  // Whole milliseconds: the bucket keeps nanoseconds, and its age is compared with this.
  const wantedTtlMs = Math.ceil(options.ttlMs ?? defaultLeaseTtlMs(streamReplicasOf(nc)));
  const { kv, ttlMs } = await leaseBucket(nc, options.bucket ?? "agn_leases", wantedTtlMs);
  if (ttlMs > wantedTtlMs)
    options.onError(
      new Error(
        `the leases bucket's keys live ${ttlMs / 1000} s, longer than this holder's ${wantedTtlMs / 1000} s: it holds them that long (a bucket is never shortened while holders may rely on it; to shorten it, stop every holder and change or delete the bucket)`,
      ),
    );
  let revision: number | undefined;
  let renewedAt = 0;
  let stopped = false;
  // Elections and depositions run one after the other, never interleaved.
  let transition: Promise<void> = Promise.resolve();
  let leading = false;
  /** Whether this process held the key before: after JetStream trouble it takes it back first. */
  let heldBefore = false;
  /** When JetStream last failed one of this process's attempts to take the key (a monotonic clock, as every time here). */
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
  const renewalOverdue = () => revision !== undefined && performance.now() - renewedAt > (ttlMs * 2) / 3;

  /**
   * Renews the key, or tries to take it; resolves whether JetStream trouble got in the way (a holder
   * then tries again sooner than a round).
   */
  const attempt = async (): Promise<boolean> => {
    // The key's life starts when the bucket stores the write, after this: counted from here, the
    // holder's view of it is never longer than the bucket's.
    const sentAt = performance.now();
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
    if (!heldBefore && performance.now() - troubleSeenAt < ttlMs) return false;
    let troubled = false;
    /** When the write that gave this process the key was sent. */
    let writtenAt = sentAt;
    try {
      revision = await kv.create(options.key, options.holder);
    } catch (error) {
      // Held: by someone else, or still by this process after a lost connection outlived its
      // renewals (nobody else could take a key that never expired): then it is this holder's again.
      let unreadable = false;
      const entry = await kv.get(options.key).catch(() => {
        unreadable = true;
        return null;
      });
      // Anything but "the key exists" (a timeout, no responders: the bucket has no leader), or a
      // key that cannot be read: JetStream is in trouble. A key is read from any replica, so a
      // standby that only read it would not notice that its holder cannot renew it. A key taken
      // but read as absent is not trouble: each replica expires it on its own clock, and the
      // stream's leader refused the create a moment before the replica read found it gone (a
      // clean-clone CI run's standby took that for trouble, deferred a TTL and led 30 s after its
      // leader's crash); the next round takes it.
      if (unreadable || !isTaken(error)) {
        options.onError(error);
        troubleSeenAt = performance.now();
        troubled = true;
      }
      if (entry?.string() !== options.holder) {
        // Another holder has it since: this one is no longer the one to take it back.
        if (entry) heldBefore = false;
        return troubled;
      }
      try {
        // Counted from here, not from the create: that one may have waited out its timeout, and
        // a holder counting from it could be overdue the moment it leads.
        writtenAt = performance.now();
        revision = await kv.update(options.key, options.holder, entry.revision);
      } catch {
        return troubled;
      }
    }
    renewedAt = writtenAt;
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
  }, halfRoundMs(ttlMs));
  watchdog.unref();
  let timer: NodeJS.Timeout | undefined;
  let attempting: Promise<boolean> = Promise.resolve(false);
  // A holder whose renewal failed tries again after half a round: its NATS node frozen, the client
  // moves to another node within seconds, and a renewal sent from there before the key expires
  // keeps the leadership (and the consumption leader's state).
  const loop = async () => {
    attempting = attempt().catch((error: unknown) => {
      options.onError(error);
      return false;
    });
    const troubled = await attempting;
    if (!stopped) timer = setTimeout(loop, troubled && heldBefore ? halfRoundMs(ttlMs) : roundMs(ttlMs));
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
