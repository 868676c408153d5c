import { isUnpublishable, jsonOrUndefined, type NatsConnection, publishEvent } from "@agentnet/bus";
import { Events, GatewayRequestEvent, ProxyHeartbeat } from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { AdmissionWatch } from "../domain/admissions";

const ADMITTED_PREFIX = Events.proxyAdmitted("");

/**
 * The leader's side of admissions: follows what proxies admit and their heartbeats, and every
 * `sweepMs` publishes the admission events of proxies taken for dead onto the request stream (with
 * the request id as Nats-Msg-Id, so an event the proxy did publish is stored once), where
 * settlement and telemetry take them like any other. Returns a stop function.
 */
export function followAdmissions(
  deps: { nc: NatsConnection; logger: Logger; watch: AdmissionWatch; clock: () => number },
  sweepMs: number,
): () => void {
  const { nc, logger, watch, clock } = deps;
  const admitted = nc.subscribe(Events.proxyAdmittedAll, {
    callback: (error, msg) => {
      if (error) return;
      const proxyId = msg.subject.slice(ADMITTED_PREFIX.length);
      const now = clock();
      for (const line of msg.string().split("\n")) {
        const space = line.indexOf(" ");
        if (space > 0) watch.admitted(proxyId, line.slice(0, space), line.slice(space + 1), now);
      }
    },
  });
  const heartbeats = nc.subscribe(Events.proxyHeartbeat, {
    callback: (error, msg) => {
      if (error) return;
      const beat = ProxyHeartbeat.safeParse(jsonOrUndefined(msg.string()));
      if (beat.success) watch.heard(beat.data.proxy_id, clock());
    },
  });
  // While this replica was cut off it heard nobody: that is no proof that anyone died.
  let stopped = false;
  void (async () => {
    for await (const status of nc.status()) {
      if (stopped) break;
      if (status.type === "reconnect") watch.heardEveryone(clock());
    }
  })().catch(() => undefined);

  let unpublished: string[] = [];
  let sweeping = false;
  const sweep = async () => {
    // Only a replica NATS answers can tell who fell silent: while its own connection is silent (not
    // yet declared lost, `connectBus`) or down, every proxy looks silent to it.
    try {
      await nc.flush();
    } catch {
      return;
    }
    const events = [...unpublished, ...watch.orphans(clock())];
    unpublished = [];
    let published = 0;
    for (let i = 0; i < events.length; i++) {
      const event = GatewayRequestEvent.safeParse(jsonOrUndefined(events[i] as string));
      if (!event.success) {
        logger.warn(
          { issues: event.error.issues.slice(0, 3) },
          "dropping an admission that is not a request event",
        );
        continue;
      }
      try {
        await publishEvent(nc, Events.requests(event.data.account_id), event.data, event.data.id);
        published++;
      } catch (err) {
        // Publishing it again cannot help, and would hold back every admission behind it.
        if (isUnpublishable(err)) {
          logger.warn(
            { request_id: event.data.id, reason: err.message },
            "dropping the admission of a lost proxy's request: the bus cannot carry it",
          );
          continue;
        }
        unpublished = events.slice(i);
        logger.warn({ err }, "cannot publish the event of a request whose proxy was lost; retrying");
        break;
      }
    }
    if (published > 0)
      logger.warn({ requests: published }, "charged requests whose proxy was lost mid-request as admitted");
  };
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    void sweep().finally(() => {
      sweeping = false;
    });
  }, sweepMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
    admitted.unsubscribe();
    heartbeats.unsubscribe();
  };
}
